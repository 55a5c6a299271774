"""Planning a judge's part of a run: which calls are answered already (the cache), which stored
ratings no current answer backs (retired), and what the pending calls would cost (dry run).

Each call is keyed by (judge spec + parameters, rubric hash, item content hash, trial): a key
already answered (``ok`` or ``abstain``) is never sent again, so a rerun makes zero calls and a
changed rubric, judge parameter or item text makes new keys.
"""

from __future__ import annotations

from judgekit.judges.base import Completion, JudgeEntry, call_key
from judgekit.judges.jobs import Items, Job, JudgeRun
from judgekit.judges.prices import call_cost, discounted
from judgekit.judges.writer import judge_rating
from judgekit.rubric.model import Rubric
from judgekit.store.calls import StoredAnswer, answered
from judgekit.store.database import Store, StoredJudgeRating

#: typical length of a judge's JSON answer, for cost estimates
TYPICAL_ANSWER_TOKENS = 60


def judge_jobs(params: str, rubric: Rubric, entry: JudgeEntry, items: Items, *, by_item_id: bool) -> list[Job]:
    """Every (item, trial) of a judge with its call key. ``by_item_id``: the judge answers by
    item id, not by text (``replay:``), so the id is part of the key and equal texts do not
    share an answer. The items' template variables (``items.key_extra``) are part of the key."""
    extra = items.key_extra  # the template variables of the items, if any: part of the key
    return [
        Job(i, t, call_key(params, rubric.hash,
                           (f"{h}\x1f{items.ids[i]}" if by_item_id else h) + extra, t))
        for i, h in enumerate(items.hashes)
        for t in range(entry.trials)
    ]


def plan(store: Store, run: JudgeRun) -> None:
    """Fill ``run.jobs`` with the calls not answered yet and ``run.followers`` with the items
    that share a pending call's text (one call answers them all).

    Cached answers missing from the ratings (a renamed judge, a reparse) are written back from
    the calls table; ratings of the judge that no current answer backs are retired."""
    shared, entry, summary = run.panel, run.entry, run.summary
    rubric, items, writer = shared.rubric, shared.items, shared.writer
    jobs = judge_jobs(run.params, rubric, entry, items, by_item_id=run.judge.by_item_id)
    done = answered(store, [j.key for j in jobs])
    have = store.judge_rating_calls(entry.id, rubric.id, rubric.hash)
    # A rating of this judge that no current answer backs was made with other parameters, for
    # an older text of the item, or for a trial the panel no longer asks for: it must not count
    # (nor outvote the current trials) while the new answer is pending. Error ratings carry no
    # label and are replaced when the call is retried.
    if have:
        backed = {(items.ids[j.item], j.trial) for j in jobs if j.key in done}
        panel_ids = set(items.ids)
        for (iid, trial), (_, status, _key) in have.items():
            if iid in panel_ids and (iid, trial) not in backed and (
                trial >= entry.trials or status != "error"
            ):
                writer.retire(iid, entry.id, trial)
                summary.retired += 1
    todo = jobs
    if done:
        todo = []
        for job in jobs:
            hit = done.get(job.key)
            if hit is None:
                todo.append(job)
                continue
            summary.cached += 1
            _write_stored(run, job, hit, have)
    run.jobs, run.followers = _split_followers(todo)
    run.pending_total = run.pending


def _write_stored(
    run: JudgeRun, job: Job, hit: StoredAnswer, have: dict[tuple[str, int], StoredJudgeRating]
) -> None:
    """The rating of ``job`` from its stored answer, unless the stored rating says the same."""
    rubric, iid = run.panel.rubric, run.panel.items.ids[job.item]
    # rewritten when the label changed, or when it now comes from another call
    # (parameters switched back): the rating must point at the call it is made from
    if have.get((iid, job.trial)) != (hit.label, hit.status, job.key):
        text = hit.rationale if hit.status == "ok" else f"abstain: {hit.error}"
        run.panel.writer.add(judge_rating(rubric, item_id=iid, rater_id=run.entry.id,
                                          trial=job.trial, status=hit.status, label=hit.label,
                                          text=text, call_key=job.key))


def take_answered(store: Store, run: JudgeRun, jobs: list[Job]) -> set[str]:
    """Pending jobs (leads) that another run answered since the plan: their ratings and their
    followers' are written from the stored answers (as cached ones are), counted in the
    summary's ``other_run``; returns the keys that were answered."""
    done = answered(store, [j.key for j in jobs])
    if not done:
        return set()
    rubric, entry, s = run.panel.rubric, run.entry, run.summary
    have = store.judge_rating_calls(entry.id, rubric.id, rubric.hash)
    for job in jobs:
        hit = done.get(job.key)
        if hit is None:
            continue
        for j in (job, *run.followers.pop(job.key, ())):
            _write_stored(run, j, hit, have)
            s.other_run += 1
    return set(done)


def _split_followers(jobs: list[Job]) -> tuple[list[Job], dict[str, list[Job]]]:
    """The first job of each key, and the later jobs of the same key (its followers)."""
    leads: dict[str, Job] = {}
    followers: dict[str, list[Job]] = {}
    for job in jobs:
        if job.key in leads:
            followers.setdefault(job.key, []).append(job)
        else:
            leads[job.key] = job
    return list(leads.values()), followers


def estimate(run: JudgeRun) -> None:
    """Fill the summary's estimate for the pending calls (~4 characters a token)."""
    s = run.summary
    s.pending = len(run.jobs)  # calls to make (items sharing a text share a call)
    if run.judge.local or run.price is None:
        return
    items = run.panel.items
    tokens_in = sum(
        (run.system_chars + len(items.request(j.item, j.trial).user)) // 4 for j in run.jobs
    )
    price = discounted(run.price) if run.entry.batch else run.price
    for out, attr in ((min(TYPICAL_ANSWER_TOKENS, run.entry.max_tokens), "estimated_cost_usd"),
                      (run.entry.max_tokens, "max_cost_usd")):
        cost = call_cost(price, Completion(raw=None, input_tokens=tokens_in,
                                           output_tokens=out * len(run.jobs)))
        setattr(s, attr, cost)
    s.input_tokens = tokens_in


__all__ = ["TYPICAL_ANSWER_TOKENS", "estimate", "judge_jobs", "plan", "take_answered"]
