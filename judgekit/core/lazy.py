"""Lazy package exports: a package's names are imported from their modules on first use, so
``import judgekit.cli`` (and ``--help``) does not load pandas, the statistics or the SDKs.

A package declares ``_LAZY = {name: submodule}`` and ends with
``__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)``. Any other attribute falls back
to a submodule of that name: ``import judgekit.agreement as a; a.kappa`` works whether or not
``judgekit.agreement.kappa`` was imported before (as it did before the exports were lazy).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any


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


def lazy_exports(package: str, lazy: dict[str, str],
                 names: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``lazy`` is imported from
    ``package.<lazy[name]>`` on first use and kept in the package's namespace; any other name is
    a submodule (:func:`submodule`)."""

    def getattr_(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            return submodule(package, name)
        # a dotted path from the top (``judgekit.x.y``) for a name that lives in another package
        full = module if module.startswith("judgekit.") else f"{package}.{module}"
        value = getattr(importlib.import_module(full), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return getattr_, dir_
