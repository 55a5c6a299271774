"""judgekit.core.console.LazyConsole: the command modules' consoles, made on first use."""

from __future__ import annotations

import io

from judgekit.core.console import LazyConsole, SafeConsole, lazy_console, resolved


def test_a_lazy_console_is_the_safe_console_made_on_first_use():
    buf = io.StringIO()
    con = lazy_console(file=buf, width=80)
    assert isinstance(con, LazyConsole) and con._console is None  # nothing made yet
    con.print("rater \x1bx [bold]ok[/bold]")
    real = resolved(con)
    assert isinstance(real, SafeConsole) and real is con.resolve()
    # highlight off, soft wrap on, control characters shown as escapes, markup applied
    assert buf.getvalue() == "rater \\x1bx ok\n"
    with con as inside:  # ``with console:`` buffers like the real console's
        assert inside is real
        con.print("a")
        assert buf.getvalue().endswith("ok\n")
    assert buf.getvalue().endswith("ok\na\n")

