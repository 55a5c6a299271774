"""Command-line options of the standalone fake provider (``python -m judgekit.testing.fakeserver``)
that let it serve a judge of one's own study: ``--port N`` (a fixed port, so a panel file can name
``http://127.0.0.1:N/v1``) and ``--script module:function`` (the function that answers each
request; :class:`judgekit.testing.script.FakeRequest` in, a label reply out).

Without ``--script`` the server answers with :func:`judgekit.testing.script.default_script`, which
does not read the response for its meaning: it returns the label named by a ``LABEL=<code>``
marker in the response, else a label picked from the rubric's codes by a hash of the response
text — stable, but unrelated to what the response says. A study's judge needs a script.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_serve_options", "load_script"]


def add_serve_options(ap: argparse.ArgumentParser) -> None:
    """Add ``--port`` and ``--script`` to the fake provider's argument parser."""
    ap.add_argument("--port", type=int, default=0,
                    help="port on 127.0.0.1 to listen on (default: a free one, printed in READY)")
    ap.add_argument("--script", default=None, metavar="MODULE:FUNCTION",
                    help="the function answering each request, e.g. myjudge:answer (a module on "
                         "the path or in the current folder); default: a LABEL=<code> marker in "
                         "the response, else a stable pick that ignores what the response says")


def load_script(spec: str | None) -> Any:
    """The callable named by ``module:function`` (None → None); a bad name exits with one
    sentence (exit code 2)."""
    if spec is None:
        return None
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        _fail(f"--script {spec!r}: give it as MODULE:FUNCTION, e.g. --script myjudge:answer.")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # a module in the current folder, as `python -m` finds it
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        _fail(f"--script {spec!r}: cannot import module {module!r} ({exc}); run from the folder "
              "holding it or put it on PYTHONPATH.")
    fn = getattr(mod, name, None)
    if not callable(fn):
        _fail(f"--script {spec!r}: module {module!r} has no function {name!r}.")
    return fn


def _fail(message: str) -> Any:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)
