"""The judgekit command line: a thin layer over the library.

Each command group lives in its own module and is registered here. Any
:class:`~judgekit.errors.JudgekitError` becomes one sentence on stderr and exit code 2 (or the
error's own ``exit_code``), never a traceback; so, as a last resort, does an ``OSError`` (a file
name too long, a folder that cannot be created). The sentence quotes file names, keys and values
from user files, so it is printed through :func:`judgekit.core.console.clean` (control characters as
visible escapes, one line).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from judgekit import __version__
from judgekit.core.console import echo
from judgekit.errors import JudgekitError

# The statistics' matrix products are small (resamples x item patterns): BLAS threads make no
# command faster but spin on every core of a shared machine (agree --by model on 1M ratings:
# 4.4 s of CPU with one thread against 7.4-8.9 s with the default, the same wall time; see
# bench/README.md). The commands run with one BLAS thread unless the user chose a number.
# This only takes effect before numpy is first imported (the command line imports it lazily).
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM (a scheduler's or ``kill``'s stop) ends the command as Ctrl-C does: the same
    summary of what finished, the same exit code 130."""
    raise KeyboardInterrupt


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away (``judgekit ... | head``): say nothing more, exit 0.
    stdout is pointed at /dev/null so the interpreter's last flush does not complain either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(0)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _terminate)
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # a reader gone away shows here, inside the handlers below
        except BrokenPipeError:
            _quiet_broken_pipe()
        except SystemExit as exc:  # rich ends a print to a closed pipe with SystemExit(1)
            if isinstance(exc.__context__, BrokenPipeError):
                _quiet_broken_pipe()
            raise
        except JudgekitError as exc:
            hint = getattr(exc, "cli_hint", None)
            echo(f"error: {exc}" + (f" {hint}" if hint else ""), err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:  # last resort: a file-system error no reader or writer named
            from judgekit.core.oserrors import os_error_message

            echo(f"error: {os_error_message(exc)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("interrupted; everything finished so far is in the store.", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="judgekit")
def main() -> None:
    """judgekit: decide whether an LLM judge can be trusted before an experiment relies on it.

    \b
    Typical flow:
      judgekit import labels.csv --rubric refusal --raters ann1,ann2 --judges gpt4
      judgekit agree --rubric refusal --by model
      judgekit gate policy.yaml
    Try `judgekit demo` for the whole pipeline on shipped data, offline.
    """


def _register() -> None:
    from judgekit.cli import (
        adjudicate,
        analyze,
        core,
        escalate,
        judge,
        labelstudio,
        plan,
        probe,
        report,
        store_copy,
    )

    for module in (core, adjudicate, judge, labelstudio, report, analyze, probe, escalate, plan,
                   store_copy):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
