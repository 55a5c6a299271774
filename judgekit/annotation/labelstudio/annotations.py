"""Label Studio annotations -> judgekit ratings and items: the latest revision of each
annotation, rater ids (emails or ``--annotator-map``), labels through the rubric, and the check
that a task shows the same text as the item already stored under its id."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgekit.annotation.labelstudio.client import ENV_TOKEN, ENV_URL
from judgekit.annotation.labelstudio.exports import Annotation
from judgekit.annotation.labelstudio.values import as_float, excerpt, text_problem
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric
from judgekit.store.data import normalise_ratings
from judgekit.store.database import RATING_COLUMNS
from judgekit.store.schema import is_missing


@dataclass
class PullSummary:
    """What a pull found and wrote."""

    source: str
    ratings: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    cancelled: int = 0
    superseded: int = 0
    unrated: int = 0
    items_added: int = 0
    by_rubric: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"Pulled {self.ratings} human ratings from {self.source}: {self.new} new, "
            f"{self.changed} revised, {self.unchanged} unchanged."
        ]
        skipped = []
        if self.cancelled:
            skipped.append(f"{self.cancelled} cancelled annotations skipped")
        if self.superseded:
            skipped.append(f"{self.superseded} older annotations replaced by a later one")
        if self.unrated:
            skipped.append(f"{self.unrated} rubric answers left empty")
        if skipped:
            out.append("  " + "; ".join(skipped) + ".")
        for rubric, by_rater in self.by_rubric.items():
            raters = ", ".join(f"{r} {n}" for r, n in by_rater.items())
            out.append(f"  {rubric}: {raters}")
        out.extend(f"  {n}" for n in self.notes)
        return out


def _latest_annotations(anns: list[Annotation]) -> tuple[list[Annotation], int, int]:
    """Keep each annotator's latest non-cancelled annotation per task."""
    cancelled = sum(a.cancelled for a in anns)
    live = [a for a in anns if not a.cancelled]
    best: dict[tuple[str, str], Annotation] = {}
    for a in live:
        key = (a.item_id, str(a.user))
        cur = best.get(key)
        if cur is None or (a.updated, as_float(a.annotation_id)) > (cur.updated, as_float(cur.annotation_id)):
            best[key] = a
    return list(best.values()), cancelled, len(live) - len(best)


def annotations_to_ratings(
    anns: Sequence[Annotation],
    rubrics: Sequence[Rubric],
    users: Mapping[Any, str],
    *,
    where: str,
    hashes: Mapping[str, str] | None = None,
    reference: Sequence[str] = (),
) -> tuple[pd.DataFrame, PullSummary]:
    """Annotations → validated human ratings (long format) for every rubric, and a summary.

    ``users`` maps Label Studio user ids to rater ids; an annotator given by email passes through.
    ``reference`` names annotators (rater ids) whose labels are the adjudicated gold label
    (``rater_kind="reference"``). ``hashes`` (rubric id → hash recorded at push) stamps ratings
    with the rubric edit the
    annotators saw.
    """
    summary = PullSummary(source=where)
    pulled_at = time.time()  # for annotations whose export carries no timestamp
    latest, summary.cancelled, summary.superseded = _latest_annotations(list(anns))
    frames = []
    for rubric in rubrics:
        rows = []
        for a in latest:
            raw = a.choices.get(rubric.name)
            if raw is None:
                summary.unrated += 1
                continue
            rater = _rater(a.user, users, where)
            problem = text_problem(rater)
            if problem is not None:  # a user's email or username as Label Studio lists it
                raise JudgekitError(
                    f"{where}: task {a.task_id} (item {a.item_id!r}), annotation "
                    f"{a.annotation_id}: the annotator's rater id {problem}; fix the user's email "
                    "in Label Studio or map the user id with --annotator-map."
                )
            if len(raw) != 1:
                raise JudgekitError(
                    f"{where}: task {a.task_id} (item {a.item_id!r}), annotation "
                    f"{a.annotation_id} by {rater}: {len(raw)} choices for {rubric.name}; one is "
                    "expected (the config asks for a single choice)."
                )
            if rubric.normalise(raw[0]) is None:
                raise JudgekitError(
                    f"{where}: task {a.task_id} (item {a.item_id!r}), annotation "
                    f"{a.annotation_id} by {rater}: choice {raw[0]!r} for {rubric.name} is not in "
                    f"rubric {rubric.id} (codes: {rubric.describe_codes()}); fix the project's "
                    "labeling config or add an alias to the rubric."
                )
            rows.append(
                {
                    "item_id": a.item_id,
                    "rater_id": rater,
                    "rater_kind": "reference" if rater in reference else "human",
                    "label": raw[0],
                    "rationale": a.comment,
                    "created_at": a.updated or pulled_at,
                }
            )
        if not rows:
            continue
        long = pd.DataFrame(rows)
        long["created_at"] = long["created_at"].astype(float)
        long["_row"] = range(len(long))
        df = normalise_ratings(long, rubric, source=where, default_kind="human")
        if hashes and rubric.id in hashes:
            df["rubric_hash"] = hashes[rubric.id]
        frames.append(df)
        counts = df["rater_id"].value_counts().sort_index()
        summary.by_rubric[rubric.id] = {str(k): int(v) for k, v in counts.items()}
    if not frames:
        return pd.DataFrame(columns=RATING_COLUMNS), summary
    out = pd.concat(frames, ignore_index=True)
    summary.ratings = len(out)
    return out[RATING_COLUMNS], summary


def _rater(user: Any, users: Mapping[Any, str], where: str) -> str:
    if isinstance(user, str) and "@" in user:
        return user.strip()
    for key in (user, as_user_id(user), str(user)):
        if key in users:
            return users[key]
    raise JudgekitError(
        f"{where}: annotator {user!r} is a Label Studio user id judgekit cannot name; give --url and "
        f"--token (or {ENV_URL} / {ENV_TOKEN}) so it can look the user up, or map ids with "
        "--annotator-map '2=alice@example.org,3=bob@example.org'."
    )


def as_user_id(v: Any) -> Any:
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


def parse_annotator_map(spec: str | None) -> dict[Any, str]:
    """``"2=alice@x.org,3=bob"`` → {2: "alice@x.org", 3: "bob"}."""
    out: dict[Any, str] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        uid, sep, name = part.partition("=")
        if not sep or not name.strip():
            raise JudgekitError(
                f"--annotator-map entry {excerpt(part.strip(), 80)} must look like 'ID=email'; fix it."
            )
        problem = text_problem(name.strip())
        if problem is not None:
            raise JudgekitError(
                f"--annotator-map entry {excerpt(part.strip(), 80)}: the rater id {problem}; fix it."
            )
        out[as_user_id(uid.strip())] = name.strip()
    return out


def items_from_annotations(anns: Sequence[Annotation], where: str) -> pd.DataFrame:
    """The items of annotations whose item the store does not have, from their task data: it
    must carry the response people rated (a one-turn user conversation becomes the prompt)."""
    rows: dict[str, dict[str, Any]] = {}
    for a in anns:
        if a.item_id in rows:
            continue
        if not isinstance(a.data.get("response"), str):
            raise JudgekitError(
                f"{where}: task {a.task_id} (item {a.item_id!r}): the item is not in the store and "
                "the task data has no 'response' to store with it; import the items first "
                "(`judgekit import` or `judgekit labelstudio push --items`) or pull a project "
                "pushed by judgekit."
            )
        rec = {k: v for k, v in a.data.items() if k != "messages"}
        msgs = a.data.get("messages")
        if isinstance(msgs, str):
            msgs = json.loads(msgs)  # checked when the export was read
        if isinstance(msgs, list) and msgs:
            first = msgs[0]
            if len(msgs) == 1 and first.get("role", "user") == "user" and isinstance(first["content"], str):
                rec.setdefault("prompt", first["content"])
            else:
                rec["messages"] = msgs
        rec["item_id"] = a.item_id
        rows[a.item_id] = rec
    return pd.DataFrame(list(rows.values()))


def _turns(messages: Any, prompt: Any) -> list[tuple[str, str]] | None:
    """A conversation as the task shows it (``task_data``): (role, content) per turn, a prompt
    as one user turn; None when there is none to compare."""
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            return None
    if isinstance(messages, list):
        return [(str(m.get("role", "user")), str(m.get("content", ""))) for m in messages if isinstance(m, dict)]
    if isinstance(prompt, str):
        return [("user", prompt)]
    return None


def check_same_text(stored: pd.DataFrame, anns: Sequence[Annotation], where: str) -> None:
    """Refuse annotations of a task whose text (conversation or response) differs from the
    stored item with its id, as an import refuses such items: the labels are about another text."""
    if stored.empty:
        return
    by_id = stored.set_index("item_id")
    seen: set[str] = set()
    for a in anns:
        if a.item_id in seen or a.item_id not in by_id.index:
            continue
        seen.add(a.item_id)
        item = by_id.loc[a.item_id]
        differs = None
        response = a.data.get("response")
        if isinstance(response, str) and not is_missing(item["response"]) and response != str(item["response"]):
            differs = "response"
        else:
            shown = _turns(a.data.get("messages"), a.data.get("prompt"))
            have = _turns(None if is_missing(item.get("messages")) else item.get("messages"),
                          None if is_missing(item.get("prompt")) else item.get("prompt"))
            if shown is not None and have is not None and shown != have:
                differs = "conversation"
        if differs:
            raise JudgekitError(
                f"{where}: task {a.task_id} (item {excerpt(a.item_id)}): the store holds that item with "
                f"another {differs} than the task shows, so the labels are about another text (was the "
                "project pushed from another store, or the item re-imported since?); pull into the "
                "store the project was pushed from."
            )
