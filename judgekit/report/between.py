"""The "Judges compared where no human looked" section: rows of the report's judge-vs-judge
comparisons (:mod:`judgekit.agreement.between`), for the Markdown and HTML renderers and the
terminal alike (each formats the rows as its own table; every cell here is plain text)."""

from __future__ import annotations

from typing import Any

from judgekit.report.escape import fmt_fig, fmt_int

TITLE = "Judges compared where no human looked"
INTRO = ("Agreement between judges on every item both rated (neither is the truth): overall, "
         "where a human also rated the item (human_rated = yes) and where none did (no). A judge "
         "that agrees with the humans on the labelled sample but drifts from the other judges on "
         "the unlabelled bulk shows as a gap between the yes and no rows.")
HEADER = ["judges", "slice", "n both rated", "% agreement [95% CI]", "kappa [95% CI]",
          "weighted kappa [95% CI]", "alpha [95% CI]", "AC1 [95% CI]"]
_NUMERIC = (2, 3, 4, 5, 6, 7)


def _pct(f: dict[str, Any] | None) -> dict[str, Any] | None:
    if not f:
        return f
    return {**f, **{k: 100 * f[k] for k in ("value", "low", "high")
                    if isinstance(f.get(k), int | float)}}


FIGURES = ("percent_agreement", "kappa", "weighted_kappa", "alpha", "ac1")


def _cell(f: dict[str, Any] | None, digits: int = 2) -> str:
    """``v [lo, hi]``; an undefined figure as the bare word (its reason is said once, under the
    table: :func:`between_warnings`), so a row of undefined figures does not widen the table."""
    if f and f.get("undefined") and not isinstance(f.get("value"), int | float):
        return "undefined"
    return fmt_fig(f, digits)


def _where(r: dict[str, Any]) -> str:
    return "all items" if r["by"] is None else f"{r['by']} = {r['key']}"


def between_rows(comparisons: list[dict[str, Any]]) -> list[list[str]]:
    """One row per comparison and slice: judges, slice, n, then each figure as ``v [lo, hi]``
    (or ``undefined``, its reason among :func:`between_warnings`; ``—`` where the rubric's level
    has no such figure)."""
    rows = []
    for c in comparisons:
        a, b = c["between"]
        for r in c["rows"]:
            rows.append([f"{a} vs {b}", _where(r), fmt_int(r["n_both"]),
                         _cell(_pct(r.get("percent_agreement")), 1), _cell(r.get("kappa")),
                         _cell(r.get("weighted_kappa")), _cell(r.get("alpha")),
                         _cell(r.get("ac1"))])
    return rows


def between_warnings(comparisons: list[dict[str, Any]]) -> list[str]:
    """The comparisons' notes, each prefixed with its pair, then why figures are undefined: one
    line per slice and reason (``human_rated = no: undefined: a human rated every item.``)."""
    out = [f"{c['between'][0]} vs {c['between'][1]}: {w}" for c in comparisons
           for w in c.get("warnings") or []]
    why: dict[tuple[str, str], None] = {}
    for c in comparisons:
        for r in c["rows"]:
            for k in FIGURES:
                f = r.get(k)
                if isinstance(f, dict) and f.get("undefined") and not isinstance(f.get("value"), int | float):
                    why[(_where(r), str(f["undefined"]))] = None
    out += [f"{where}: undefined: {reason}." for where, reason in why]
    return out


def between_table(comparisons: list[dict[str, Any]]) -> tuple[list[str], list[list[str]], list[int]]:
    """``(header, rows, numeric columns)`` of :func:`between_rows`, without the figure columns
    the rubric's level does not define (``—`` in every row, e.g. weighted kappa of a nominal
    rubric)."""
    rows = between_rows(comparisons)
    keep = [i for i in range(len(HEADER))
            if i not in _NUMERIC[1:] or any(r[i] != "—" for r in rows)]
    return ([HEADER[i] for i in keep], [[r[i] for i in keep] for r in rows],
            [k for k, i in enumerate(keep) if i in _NUMERIC])
