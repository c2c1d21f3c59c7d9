"""Reading members out of CMS zip releases, in memory.

CMS renames members between releases (``PPRRVU2026_Jul_nonQPP.csv``, ``GPCI2026.csv``,
upper/lower case), so members are found by a case-insensitive regex on the base name.
"""

from __future__ import annotations

import io
import re
import zipfile

from .errors import SourceFormatError


def zip_members(data: bytes, source: str) -> list[str]:
    """Names of the files in a zip archive; a clear error when it is truncated or not a zip."""
    if not data:
        raise SourceFormatError(source, "file is empty", expected="a zip archive")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return [i.filename for i in zf.infolist() if not i.is_dir()]
    except zipfile.BadZipFile as exc:
        raise SourceFormatError(
            source, f"not a readable zip archive (truncated or corrupt: {exc})",
            expected="a complete .zip file",
        ) from None


def read_zip_member(data: bytes, pattern: str, source: str) -> tuple[str, bytes]:
    """Return ``(member_name, bytes)`` of the one member whose base name matches ``pattern``."""
    names = zip_members(data, source)
    rx = re.compile(pattern, re.IGNORECASE)
    hits = [n for n in names if rx.fullmatch(n.rsplit("/", 1)[-1])]
    if not hits:
        raise SourceFormatError(
            source, "zip has no member matching the expected name",
            expected=f"a member matching /{pattern}/", found=", ".join(names) or "(no members)",
        )
    if len(hits) > 1:
        raise SourceFormatError(
            source, "zip has several members matching the expected name",
            expected=f"exactly one member matching /{pattern}/", found=", ".join(hits),
        )
    name = hits[0]
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return name, zf.read(name)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise SourceFormatError(
            f"{source}!{name}", f"member cannot be decompressed (corrupt archive: {exc})",
        ) from None
