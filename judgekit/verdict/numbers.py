"""How the gate, the verdict, explain and the plan print a number: never a negative zero
(``-0.000``: a value that rounds to zero prints as ``0.000``, signed ones as ``+0.000``)."""

from __future__ import annotations

from typing import Any


def _unsigned_zero(x: float, digits: int) -> float:
    return 0.0 if round(x, digits) == 0 else x


def num(x: Any, digits: int = 3) -> str:
    """``0.123`` for a float (``digits`` decimals, no ``-0.000``), else ``str(x)``."""
    if not isinstance(x, float):
        return str(x)
    return f"{_unsigned_zero(x, digits):.{digits}f}"


def signed(x: float, digits: int = 3) -> str:
    """``+0.123`` / ``-0.123``; a value that rounds to zero is ``+0.000``, never ``-0.000``."""
    return f"{_unsigned_zero(float(x), digits):+.{digits}f}"


def short(x: Any) -> str:
    """``0.05`` (``:g``) for a float, no ``-0``; else ``str(x)``."""
    if not isinstance(x, float):
        return str(x)
    return f"{0.0 if x == 0 else x:g}"
