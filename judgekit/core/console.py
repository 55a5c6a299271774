"""The terminal: the console judgekit prints on, and the agreement and verdict tables.

Presentation only, below both the command line and the demo (which prints the same tables
without going through :mod:`judgekit.cli`).

Everything judgekit prints may carry text from user files (rater ids, slice values, labels,
file names, check details), so nothing of it reaches the terminal raw:

* :func:`clean` shows control characters as visible escapes: C0 controls (ESC, BEL, ...), DEL and
  C1 controls (``\\x9b`` is a CSI on many terminals) as ``\\x1b``, ``\\x9b`` ...; newline, carriage
  return and tab as ``\\n``, ``\\r``, ``\\t``; bidirectional overrides and isolates and the Unicode
  line/paragraph separators as ``\\u202e`` .... So an OSC 8 hyperlink, an OSC 0 title change, an
  OSC 52 clipboard write or a CSI screen clear in a rater id prints as text and does nothing. (A
  value that itself contains the four characters ``\\x1b`` prints the same: the display is for
  reading, the store keeps every value exactly as written.)
* :func:`safe_text` is :func:`clean` plus rich markup escaping, for user text put into a markup
  string: ``[link=http://x]`` or ``[bold red]`` in a rater id prints literally.
* :func:`echo` is ``click.echo`` of a cleaned line (what the commands print without rich).
* :func:`make_console` gives a :class:`SafeConsole`, which cleans every piece of text it renders
  (not its own styling) as a last line of defence, for text printed with ``markup=False`` or as
  a :class:`~rich.text.Text`.

The one-sentence errors of the command line go through :func:`clean` too
(:mod:`judgekit.cli`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # rich is imported when something is printed with it, not by ``echo``
    from rich.console import Console
    from rich.segment import Segment

# C0 controls, DEL, C1 controls; the bidi embeddings/overrides (U+202A-U+202E) and isolates
# (U+2066-U+2069), which reorder what is shown; the Unicode line and paragraph separators.
_UNSAFE_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The same but newline and tab, for text that is several lines by design (JSON, XML, a table).
_UNSAFE_IN_LINES_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def clean(value: Any, *, lines: bool = False) -> str:
    """``str(value)`` safe to print on a terminal: every control character as a visible escape.

    ``lines`` keeps newlines and tabs (text that is several lines by design); by default they are
    escaped too, so one value (or one sentence) stays on one line and cannot forge another.

    >>> clean("judge\\x1b]0;pwned\\x07")
    'judge\\\\x1b]0;pwned\\\\x07'
    """
    text = value if isinstance(value, str) else str(value)
    return (_UNSAFE_IN_LINES_RE if lines else _UNSAFE_RE).sub(_visible, text)


def safe_text(value: Any) -> str:
    """User text for a rich markup string: :func:`clean`, then markup escaped.

    >>> safe_text("[link=http://x]a[/link]")
    '\\\\[link=http://x]a\\\\[/link]'
    """
    from rich.markup import escape

    return escape(clean(value))


def echo(message: Any = "", *, err: bool = False, lines: bool = False) -> None:
    """``click.echo`` of :func:`clean` ``(message)`` (``lines`` keeps newlines and tabs)."""
    click.echo(clean(message, lines=lines), err=err)


def _safe_console_class() -> type[Console]:
    """:class:`SafeConsole`, defined on first use (it needs rich)."""
    global _SAFE_CONSOLE
    if _SAFE_CONSOLE is not None:
        return _SAFE_CONSOLE
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """A rich console that cleans every piece of text it renders (see the module docstring).

        Rich's own styles and cursor controls are applied after the text is cleaned, so colours,
        tables and progress bars work; a control character inside the text itself is shown as an
        escape. Text should still be cleaned before it is laid out (:func:`safe_text`,
        :func:`clean`), so that table columns are measured on what is shown.
        """

        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            def cleaned() -> Iterable[Segment]:
                for seg in buffer:
                    if seg.control or not _UNSAFE_IN_LINES_RE.search(seg.text):
                        yield seg
                    else:
                        yield Segment(clean(seg.text, lines=True), seg.style, seg.control)

            return super()._render_buffer(cleaned())

    _SAFE_CONSOLE = SafeConsole
    return SafeConsole


_SAFE_CONSOLE: type[Console] | None = None


def __getattr__(name: str) -> Any:
    if name == "SafeConsole":  # judgekit.core.console.SafeConsole, as before rich was made lazy
        return _safe_console_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_console(*, stderr: bool = False, **options: Any) -> Console:
    """A :class:`SafeConsole` that does not squeeze tables to 80 columns when output is piped to
    a file (on stderr with ``stderr``; ``options`` go to :class:`rich.console.Console`)."""
    stream = sys.stderr if stderr else sys.stdout
    options.setdefault("width", None if stream.isatty() else 150)
    options.setdefault("highlight", False)
    options.setdefault("soft_wrap", True)
    return _safe_console_class()(stderr=stderr, **options)


class LazyConsole:
    """A :func:`make_console` console made on first use: a command module's console at module
    level (``console = lazy_console()``) costs no rich import for the commands that never print
    with it. Every attribute is the real console's."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def resolve(self) -> Console:
        """The real console (made now if not yet)."""
        if self._console is None:
            self._console = make_console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.resolve(), name)

    def __enter__(self) -> Console:  # ``with console:`` (special methods skip __getattr__)
        return self.resolve().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.resolve().__exit__(*exc)


def lazy_console(*, stderr: bool = False, **options: Any) -> Console:
    """:func:`make_console` ``(stderr=..., **options)``, made when first used (:class:`LazyConsole`)."""
    return LazyConsole(stderr=stderr, **options)  # type: ignore[return-value]


def resolved(console: Any) -> Console:
    """``console``, or the real console behind a :class:`LazyConsole`."""
    return console.resolve() if isinstance(console, LazyConsole) else console


