"""Errors raised while reading CMS release files.

Every parser failure must tell a data engineer *which file*, *where* in it and *what was
expected*, because the person reading the message is usually looking at a new quarterly
release whose layout drifted. A bare ``KeyError`` from deep inside polars does not do that.
"""

from __future__ import annotations


class SourceError(Exception):
    """Base class for every failure to obtain or read a source file."""


class SourceFormatError(SourceError):
    """A release file does not have the layout the parser expects.

    ``source`` is the file (or ``zip!member``) name, ``row`` is 1-based as a person counts
    lines in an editor, ``column`` is the header name or fixed-width position range.
    """

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        row: int | None = None,
        column: str | None = None,
        expected: str | None = None,
        found: str | None = None,
    ) -> None:
        self.source = source
        self.problem = problem
        self.row = row
        self.column = column
        self.expected = expected
        self.found = found
        where = [source]
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        msg = f"{', '.join(where)}: {problem}"
        if expected is not None:
            msg += f"; expected {expected}"
        if found is not None:
            shown = found if len(found) <= 80 else found[:77] + "..."
            msg += f", found {shown!r}"
        super().__init__(msg)


class FetchError(SourceError):
    """A release file could not be downloaded or read from the mirror."""


class IntegrityError(SourceError):
    """A fetched file's sha256 differs from the value pinned for that release."""
