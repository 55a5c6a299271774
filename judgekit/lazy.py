"""The fallback of a lazy package's ``__getattr__``: a submodule of that name.

``import judgekit.agreement as a; a.kappa`` works whether or not ``judgekit.agreement.kappa`` was
imported before (as it did before the packages' ``__getattr__`` made their exports lazy).
"""

from __future__ import annotations

import importlib
from types import ModuleType


def submodule(package: str, name: str) -> ModuleType:
    """``package.name`` imported, or :class:`AttributeError` (as for any missing attribute) when
    there is no such submodule; dunder names are never looked up as modules."""
    if name.startswith("__"):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    full = f"{package}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:  # the submodule exists but itself fails to import something
            raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
