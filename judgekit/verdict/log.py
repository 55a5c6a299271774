"""The store's own record of the verdicts ``judgekit gate`` wrote on it (the ``verdicts`` table,
owned by this module), and the per-judge ratings hash a verdict carries.

A verdict file is only a file: anyone can delete a failing check, make the figures, states and
``passed`` agree and recompute ``policy_hash``, and the result reads as consistent. So the gate
records the **canonical digest** of every verdict it makes (:func:`record_verdict`: sha256 of its
canonical JSON, with its rubric, judges and created_at), and a verdict used with a store must be
one the store's gate recorded (:func:`check_against_store`). Editing any byte of meaning in the
file (a check removed, a threshold or figure changed), or copying a verdict to another store,
makes it one the store never recorded.

A verdict also records, per judge, ``judge_ratings_hash`` (:func:`judge_ratings_hash`): the
judge's ratings (item, trial, label, status) on the items that carry human or reference ratings
under the rubric. Re-importing other labels under the judge's id, or importing over a panel
judge, changes it and voids the verdict; judging new unlabelled items does not.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.verdict.check import DERIVED
from judgekit.verdict.policy_rules import people, reference_kinds, reference_problem

AGAIN = "run `judgekit gate POLICY.yaml` again and pass the verdict.json it writes"


def canonical_digest(verdict: dict[str, Any]) -> str:
    """sha256 (hex) of ``verdict``'s canonical JSON: keys sorted, no whitespace, ASCII only, as
    it reads back from the verdict.json ``judgekit gate`` writes."""
    plain = json.loads(json.dumps(verdict))
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def record_verdict(store: Any, verdict: dict[str, Any]) -> str:
    """Record ``verdict`` (as :func:`judgekit.gate.run.run_gate` made it) in ``store``; returns its
    digest. Recording the same verdict twice keeps one row."""
    d = canonical_digest(verdict)
    judges = json.dumps([j["judge"] for j in verdict["judges"]])
    try:
        with store.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO verdicts (digest, rubric, judges, created_at) VALUES (?, ?, ?, ?)",
                (d, str(verdict["rubric"]), judges, str(verdict["created_at"])),
            )
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise
        raise JudgekitError(
            f"Store {store.path} is read-only, so the gate cannot record its verdict there (analyses "
            "accept only verdicts the store's gate recorded); run the gate on a store you can write."
        ) from None
    return d


def is_recorded(store: Any, digest: str) -> bool:
    """Whether ``store``'s gate recorded a verdict with this digest."""
    row = store.conn.execute("SELECT 1 FROM verdicts WHERE digest = ?", (digest,)).fetchone()
    return row is not None


def judge_ratings_hash(store: Any, rubric: Any, judge: str) -> str:
    """Order-independent hash of ``judge``'s ratings (item, trial, label, status) under ``rubric``
    on the items that carry a human or reference rating under it (see the module doc). On a
    plain store it comes from an ordered, streamed SQL fetch (:mod:`judgekit.store.digests`, the same
    value)."""
    from judgekit.core.hashing import digest
    from judgekit.store import digests

    if digests.plain_store(store):
        return digests.judge_ratings_hash(store, rubric, judge)

    labelled = set(store.ratings(rubric=rubric, rater_kind=["human", "reference"])["item_id"].astype(str))
    mine = store.ratings(rubric=rubric, rater_ids=[judge])
    rows = sorted(
        [str(r.item_id), int(r.trial), None if r.label is None else str(r.label), str(r.status)]
        for r in mine.itertuples(index=False)
        if str(r.item_id) in labelled
    )
    return digest(rows)


def check_against_store(verdict: dict[str, Any], store: Any, rubric: Any, *, judge: str | None,
                        where: str, judge_hash: str | None = None) -> None:
    """Raise :class:`UntrustedJudgeError` (one sentence) unless, in ``store``: the verdict's
    reference is a human or reference rater (or consensus), ``judge``'s ratings on the labelled
    items are those the verdict was computed on, the verdict is one this store's gate recorded
    (:func:`record_verdict`), the labelled items' metadata is as it recorded
    (:func:`check_metadata`) and so are the imports of ``judge``'s ratings
    (:func:`check_provenance`). The other parts are
    :func:`judgekit.verdict.read.match_store`'s. ``judge_hash``: the judge's ratings hash now, if the
    caller has it (:func:`judge_ratings_hash`'s value)."""
    place = f"under {rubric.id} in {store.path}"
    kinds = reference_kinds(store, rubric)
    problem = reference_problem(str(verdict["reference"]), kinds)
    if problem is not None:
        raise UntrustedJudgeError(
            f"{where}: its {problem} {place}; gate against one of {people(kinds)} or consensus: "
            f"{AGAIN}."
        )
    if judge is not None:
        entry = next(j for j in verdict["judges"] if j["judge"] == judge)
        now = judge_hash if judge_hash is not None else judge_ratings_hash(store, rubric, judge)
        if now != entry.get("judge_ratings_hash"):
            raise UntrustedJudgeError(
                f"{where}: judge {judge!r}'s ratings on the items with human or reference ratings "
                f"{place} changed since the verdict (labels re-imported or re-judged under its "
                f"id); {AGAIN}."
            )
    if not is_recorded(store, canonical_digest(verdict)):
        raise UntrustedJudgeError(
            f"{where} was not written by `judgekit gate` on {store.path} (it was edited, or made "
            f"on another store); run the gate again on this store and pass the verdict.json it "
            f"writes."
        )
    check_metadata(verdict, store, rubric, where=where)
    if judge is not None:
        check_provenance(verdict, store, rubric, judge, where=where)


OLDER = "it was made by an older judgekit and does not record"


def check_metadata(verdict: dict[str, Any], store: Any, rubric: Any, *, where: str) -> None:
    """Raise :class:`UntrustedJudgeError` unless the metadata of the items with human or
    reference ratings (every column: the slices of ``by``, the harm column, the model, the
    conversation and turn) is what the verdict recorded (``meta_hashes``,
    :func:`judgekit.store.provenance.meta_hashes`). A verdict without it covers no metadata."""
    from judgekit.store.provenance import meta_hashes

    recorded = verdict.get("meta_hashes")
    if recorded is None:
        raise UntrustedJudgeError(
            f"{where}: {OLDER} the metadata of the items it covers (slices, harm tiers, models, "
            f"conversations), so it cannot tell whether they changed; {AGAIN}.")
    now = meta_hashes(store, rubric)
    changed = [c for c in sorted(set(now) | set(recorded)) if now.get(c) != recorded.get(c)]
    if changed:
        col = changed[0]
        how = ("added" if col not in recorded else "removed" if col not in now else "changed")
        raise UntrustedJudgeError(
            f"{where}: the item metadata column {col!r} of the items with human or reference ratings "
            f"under {rubric.id} in {store.path} was {how} since the verdict (items re-imported with "
            f"other values move to another slice, harm tier or model); {AGAIN}.")


def check_provenance(verdict: dict[str, Any], store: Any, rubric: Any, judge: str, *, where: str) -> None:
    """Raise :class:`UntrustedJudgeError` unless every import of ``judge``'s ratings the verdict
    recorded (``provenance``) still holds the same ratings (none edited, replaced or removed)."""
    from judgekit.store.provenance import PANEL, provenance_digests

    entry = next(j for j in verdict["judges"] if j["judge"] == judge)
    recorded = entry.get("provenance")
    if recorded is None:
        raise UntrustedJudgeError(
            f"{where}: {OLDER} where the ratings of judge {judge!r} came from (a panel run or an import), "
            f"so ratings imported under its name after it cannot be told apart; {AGAIN}.")
    if len(recorded) > 1 and not judge.startswith(DERIVED):
        raise UntrustedJudgeError(
            f"{where}: the ratings of judge {judge!r} it covers came from {len(recorded)} sources "
            f"({', '.join(sorted(recorded))}), and a judge is trusted only on ratings of one source (its panel "
            "calls or one import); import the judge's whole run in one file under a new rater id and "
            f"{AGAIN}.")
    now = provenance_digests(store, rubric, judge)
    for group in sorted(recorded):
        if group != PANEL and now.get(group) != recorded[group]:
            raise UntrustedJudgeError(
                f"{where}: the ratings of judge {judge!r} from {group} under {rubric.id} in {store.path} "
                f"were edited, replaced or removed since the verdict; {AGAIN}.")


def foreign_ratings(store: Any, rubric: Any, judge: str, entry: dict[str, Any]) -> list[tuple[str, int, str]]:
    """``(item_id, trial, provenance)`` of ``judge``'s ratings under ``rubric`` that the verdict
    ``entry`` (the judge's, with ``provenance``) does not cover: imported under its name after the
    gate, or panel ratings of another identity or edited after their call
    (:func:`judgekit.store.calls.ratings_not_made_by`). An entry without ``provenance``: none
    (such a verdict is refused by :func:`check_provenance`)."""
    from judgekit.store.calls import ratings_not_made_by

    groups = entry.get("provenance")
    if groups is None:
        return []
    identity = None if entry.get("spec") is None else (str(entry["spec"]), dict(entry.get("params") or {}))
    return ratings_not_made_by(store, rubric, judge, list(groups), identity)
