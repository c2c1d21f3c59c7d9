"""Clarus: agent arenas for US healthcare billing on real CMS data.

Importing the package is cheap on purpose (research loops import it in every worker):
heavy modules such as pyarrow load only when a bundle is first opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .reference import ReferenceBundle, open_reference

__all__ = ["ReferenceBundle", "open_reference", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("ReferenceBundle", "open_reference"):
        from . import reference

        return getattr(reference, name)
    raise AttributeError(f"module 'clarus_env' has no attribute {name!r}")
