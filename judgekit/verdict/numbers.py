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


def beside(x: Any, threshold: Any = None, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals — one more than the threshold it faces needs, when that is
    more (beside 0.0004: ``0.00060``) — or as many significant digits more as it takes to print
    neither a non-zero value as ``0.000`` nor a value apart from ``threshold`` as the threshold
    (``0.02004`` beside 0.02); else ``str(x)``."""
    if not isinstance(x, float):
        return str(x)
    bound = isinstance(threshold, float | int) and not isinstance(threshold, bool)
    if bound:
        shown = short(float(threshold))
        places = len(shown.split(".")[1]) if "." in shown and "e" not in shown else 0
        digits = max(digits, places + 1)
    text = num(x, digits)
    if x == 0 or x == threshold or (float(text) != 0 and not (bound and float(text) == threshold)):
        return text
    for sig in range(3, 17):
        text = f"{x:.{sig}g}"
        if float(text) != 0 and not (bound and float(text) == threshold):
            return text
    return repr(x)


def signed_pair(low: float, high: float, digits: int = 3) -> tuple[str, str]:
    """An interval's ends as :func:`signed` prints them; when ``digits`` decimals print two
    different ends alike (``+0.030, +0.030`` for 0.0300001 … 0.0300004), as many more as tell them
    apart (at most 9), rounded outward so the printed interval holds the interval."""
    import math

    lo_text, hi_text = signed(low, digits), signed(high, digits)
    if lo_text != hi_text or low == high or not (math.isfinite(low) and math.isfinite(high)):
        return lo_text, hi_text
    d = next((d for d in range(digits + 1, 10) if signed(low, d) != signed(high, d)), 9)
    f = 10.0 ** d
    return signed(math.floor(low * f + 1e-9) / f, d), signed(math.ceil(high * f - 1e-9) / f, d)
