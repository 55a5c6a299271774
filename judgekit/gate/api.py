"""The Python API of the two main steps, as the command line runs them: :func:`agree` (the
agreement report, ``judgekit agree``) and :func:`gate` (the verdict, ``judgekit gate``), with
result objects that print, convert to JSON (``to_dict``) and to a table (``to_frame``).

>>> import judgekit
>>> report = judgekit.agree("judgekit.db", "refusal", by=["model"])      # doctest: +SKIP
>>> report.to_frame().query("judge == 'gpt4'")[["slice", "kappa", "kappa_low"]]   # doctest: +SKIP
>>> result = judgekit.gate("judgekit.db", "policy.yaml")                  # doctest: +SKIP
>>> result.state, result.to_frame().query("state != 'pass'")              # doctest: +SKIP

A store is a :class:`~judgekit.store.database.Store` or the path of one (opened, read and closed
again); a rubric is a :class:`~judgekit.rubric.model.Rubric`, a shipped rubric's name
(``"refusal"``) or a YAML path — as on the command line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from judgekit.rubric.model import Rubric

__all__ = ["AgreementResult", "GateResult", "agree", "gate"]

#: the figures of a judge against the reference that :meth:`AgreementResult.to_frame` lists
FIGURES = ("kappa", "weighted_kappa", "alpha", "ac1", "percent_agreement")


@contextmanager
def _opened(store: Any) -> Iterator[Any]:
    """``store`` itself, or the store at that path (which must exist), closed afterwards."""
    if isinstance(store, (str, Path)):
        from judgekit.store.database import Store

        with Store.open_existing(store) as s:
            yield s
    else:
        yield store


def _rubric(rubric: Rubric | str | Path) -> Rubric:
    from judgekit.rubric.model import Rubric, load_rubric

    return rubric if isinstance(rubric, Rubric) else load_rubric(str(rubric))


@dataclass
class AgreementResult:
    """The agreement report of :func:`agree`: each judge against the reference, each human and
    the human ceiling, overall and per slice, with 95% CIs.

    ``data`` is the report in its JSON layout (``slices``, each with its ``judges``; the
    ``judgekit agree --json`` document), ``warnings`` its notes (items without a reference
    label, raters left out, ...)."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``judgekit agree --json`` prints)."""
        return {**self.data, "warnings": list(self.warnings)}

    def to_frame(self) -> pd.DataFrame:
        """One row per slice and judge: ``slice`` (``all items`` or ``model = gpt4``), ``by``,
        ``key``, ``judge``, ``n_items``, ``n_rated``, ``abstain_rate``, ``error_rate``, then for
        each figure against the reference (kappa, weighted_kappa, alpha, ac1,
        percent_agreement) its value and 95% CI (``kappa``, ``kappa_low``, ``kappa_high``; NaN
        where undefined or not defined for the rubric's level), ``kappa_n`` (the items of those
        figures), the human ceiling's kappa and ``human_kappa_n``, and the like-for-like headline
        (``headline_basis``, ``headline_n``, ``headline_kappa``, ``headline_human_kappa``)."""
        import pandas as pd

        rows = []
        for s in self.data.get("slices") or []:
            where = "all items" if s.get("by") is None else f"{s['by']} = {s['key']}"
            ceiling = ((s.get("human_ceiling") or {}).get("kappa") or {}).get("value")
            for judge, j in (s.get("judges") or {}).items():
                row: dict[str, Any] = {"slice": where, "by": s.get("by"), "key": s.get("key"), "judge": judge,
                                       "n_items": j.get("n_items"), "n_rated": j.get("n_rated"),
                                       "abstain_rate": j.get("abstain_rate"), "error_rate": j.get("error_rate")}
                vs = j.get("vs_reference") or {}
                for f in FIGURES:
                    fig = vs.get(f) or {}
                    row[f] = fig.get("value")
                    row[f"{f}_low"] = fig.get("low")
                    row[f"{f}_high"] = fig.get("high")
                row["kappa_n"] = vs.get("n")
                row["human_kappa"] = ceiling
                row["human_kappa_n"] = (s.get("human_ceiling") or {}).get("n")
                head = j.get("headline") or {}  # like for like: judge and humans on the same n items
                row["headline_basis"], row["headline_n"] = head.get("basis"), head.get("n")
                row["headline_kappa"] = (head.get("kappa") or {}).get("value")
                row["headline_human_kappa"] = ((head.get("humans") or {}).get("kappa") or {}).get("value")
                rows.append(row)
        frame = pd.DataFrame(rows)
        num = [c for c in frame.columns if c not in ("slice", "by", "key", "judge", "headline_basis")]
        frame[num] = frame[num].apply(pd.to_numeric, errors="coerce")
        return frame

    def __repr__(self) -> str:
        judges = ", ".join(self.data.get("judges") or [])
        return (f"AgreementResult({self.data.get('rubric')}, judges: {judges or 'none'}, "
                f"{len(self.data.get('slices') or [])} slices)")


@dataclass
class GateResult:
    """The verdict of :func:`gate`: ``state`` (``pass`` when every judge passed, ``fail`` when
    one failed, else ``inconclusive``), ``verdict`` (the ``verdict.json`` document: per judge its
    checks with figure, threshold, n, interval and state, and the label budget of an inconclusive
    one) and ``lines`` (the verdict in words, as the command prints it)."""

    verdict: dict[str, Any]
    lines: list[str] = field(default_factory=list)

    @property
    def state(self) -> str:
        """``pass``, ``fail`` or ``inconclusive`` (the ``judgekit gate`` exit codes 0, 1, 3)."""
        return str(self.verdict["state"])

    @property
    def trusted(self) -> list[str]:
        """The judges that passed every check."""
        return [str(j["judge"]) for j in self.verdict.get("judges") or [] if j.get("state") == "pass"]

    def to_dict(self) -> dict[str, Any]:
        """The verdict document (what ``judgekit gate`` writes to verdict.json)."""
        return self.verdict

    def to_frame(self) -> pd.DataFrame:
        """One row per judge and check: ``judge``, ``judge_state``, ``check``, ``state``,
        ``figure``, ``threshold``, ``ci_low``, ``ci_high``, ``n``."""
        import pandas as pd

        rows = []
        for j in self.verdict.get("judges") or []:
            for c in j.get("checks") or []:
                ci = c.get("ci")
                low, high = (ci if isinstance(ci, (list, tuple)) and len(ci) == 2
                             else ((ci or {}).get("low"), (ci or {}).get("high")) if isinstance(ci, dict)
                             else (None, None))
                rows.append({"judge": j.get("judge"), "judge_state": j.get("state"), "check": c.get("name"),
                             "state": c.get("state"), "figure": c.get("figure"), "threshold": c.get("threshold"),
                             "ci_low": low, "ci_high": high, "n": c.get("n")})
        return pd.DataFrame(rows, columns=["judge", "judge_state", "check", "state", "figure", "threshold",
                                           "ci_low", "ci_high", "n"])

    def write(self, path: str | Path) -> Path:
        """Write the verdict to ``path`` (a verdict.json :func:`judgekit.require_trusted` and
        the analyses accept)."""
        from judgekit.core.atomic import write_text_atomic

        return write_text_atomic(path, json.dumps(self.verdict, indent=1))

    def __repr__(self) -> str:
        states = ", ".join(f"{j.get('judge')}: {j.get('state')}" for j in self.verdict.get("judges") or [])
        return f"GateResult({self.state}; {states})"


def agree(store: Any, rubric: Rubric | str | Path, *, by: Sequence[str] = (), judges: Sequence[str] | None = None,
          humans: Sequence[str] | None = None, reference: str | None = None, resamples: int = 1000,
          seed: int = 0) -> AgreementResult:
    """The agreement report of ``judgekit agree``: each judge against the reference (the
    adjudicated rater if there is one, else the humans' majority; ``reference="consensus"`` or a
    rater id to choose), against each human, and the human ceiling, per ``by`` slice, with
    bootstrap 95% CIs over items (``resamples``, ``seed``).

    ``store``: a Store or its path; ``rubric``: a Rubric, a shipped rubric's name or a YAML path.
    Figures and formulas: docs/agreement.md.
    """
    from judgekit.agreement.report import agreement_report

    rub = _rubric(rubric)
    with _opened(store) as s:
        rep = agreement_report(s, rubric=rub, by=list(by), judges=judges, humans=humans, reference=reference,
                               n_resamples=resamples, seed=seed)
    return AgreementResult(rep.data, list(rep.warnings))


def gate(store: Any, policy: str | Path) -> GateResult:
    """The verdict of ``judgekit gate POLICY``: every check of the policy for every judge it
    names, each pass / fail / inconclusive with its figure, threshold, n and interval, and a
    label budget for an inconclusive judge. The verdict is recorded in the store (so
    :func:`judgekit.require_trusted` accepts it with that store); write it with
    :meth:`GateResult.write`. Policy format: docs/gate.md."""
    from judgekit.gate.run import explain, run_gate

    with _opened(store) as s:
        verdict, _ = run_gate(s, policy)
    return GateResult(verdict, explain(verdict))
