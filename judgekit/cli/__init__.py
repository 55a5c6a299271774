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


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except JudgekitError as exc:
            echo(f"error: {exc}", err=True)
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
    from judgekit.cli import analyze, core, judge, labelstudio, plan, probe, report

    for module in (core, judge, labelstudio, report, analyze, probe, plan):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
