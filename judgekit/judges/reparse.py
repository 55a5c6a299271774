"""Re-parsing: the stored raw completions behind a panel's judges read again with the current
parser, without a call (``judgekit judge --reparse``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from judgekit.judges.base import JudgeContext, build_judge, spec_params
from judgekit.judges.framing import variables_key
from judgekit.judges.jobs import Items
from judgekit.judges.panel_aggregates import write_aggregates
from judgekit.judges.panelfile import Panel
from judgekit.judges.plan import judge_jobs
from judgekit.judges.summary import ReparseSummary
from judgekit.judges.writer import Writer, judge_rating
from judgekit.rubric.prompt import AnswerParser, answer_schema, fill_variables, system_prompt
from judgekit.store.calls import ParsedAnswer, answered, update_parsed
from judgekit.store.database import Store


def reparse_panel(
    panel: Panel,
    store: Store,
    *,
    only: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
) -> ReparseSummary:
    """Re-parse the stored raw completions behind the panel's judges with the current parser and
    update the ratings (and aggregates) that change. Needs no API key and sends nothing.

    Each judge's calls are found by their keys, as a run finds them: the completions of its
    current parameters (whatever judge id made them), for every item and trial of the panel,
    items sharing a text included — never an answer given with other parameters. A panel with
    sub-panels (``rubric_by`` / ``variables``) re-parses each under its own rubric."""
    if panel.groups:
        total: dict[str, dict[str, int]] = {}
        for group in panel.groups:
            for jid, counts in reparse_panel(group, store, only=only, env=env).judges.items():
                acc = total.setdefault(jid, dict.fromkeys(counts, 0))
                for k, n in counts.items():
                    acc[k] += n
        return ReparseSummary(total)
    rubric = panel.rubric
    parser = AnswerParser(rubric)
    items = Items(panel.table, key_extra=variables_key(panel.variables))
    entries = [e for e in panel.judges if only is None or e.id in only]
    # A judge is rebuilt only for its cache identity; an API judge cannot be built without a
    # key, so a placeholder stands in for a missing one (a re-parse sends nothing).
    build_env = dict(os.environ if env is None else env)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", *(e.api_key_env for e in entries)):
        if var:
            build_env.setdefault(var, "judgekit-reparse-sends-nothing")
    ctx = JudgeContext(rubric=rubric, system=fill_variables(system_prompt(rubric), panel.variables),
                       schema=answer_schema(rubric),
                       base_dir=str(panel.base_dir), env=build_env)
    writer = Writer(store, rubric)
    result: dict[str, dict[str, int]] = {}
    for entry in entries:
        judge = build_judge(entry, ctx, source=panel.source)
        params = spec_params(entry, judge)
        if not judge.local:
            import asyncio

            asyncio.run(judge.aclose())
        jobs = judge_jobs(params, rubric, entry, items, by_item_id=judge.by_item_id)
        stored = answered(store, [j.key for j in jobs], raw=True)
        counts = {"parsed": 0, "changed": 0, "ok": 0, "abstain": 0}
        updates: dict[str, ParsedAnswer] = {}
        for job in jobs:
            old = stored.get(job.key)
            if old is None:
                continue
            p = parser.parse(old.raw, quoted=items.quoted(job.item))
            counts["parsed"] += 1
            counts[p.status] += 1
            if (p.status, p.label, p.rationale, p.reason) != (old.status, old.label, old.rationale, old.error):
                counts["changed"] += 1
                updates.setdefault(job.key, ParsedAnswer(job.key, p.status, p.label, p.rationale, p.reason))
            text = p.rationale if p.status == "ok" else f"abstain: {p.reason}"
            writer.add(judge_rating(rubric, item_id=items.ids[job.item], rater_id=entry.id,
                                    trial=job.trial, status=p.status, label=p.label, text=text,
                                    call_key=job.key))
        with store.transaction():
            update_parsed(store, updates.values())
            writer.flush()
        result[entry.id] = counts
    if panel.file.aggregate:
        write_aggregates(panel, store)
    return ReparseSummary(result)


__all__ = ["reparse_panel"]
