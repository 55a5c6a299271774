"""Push items to Label Studio as tasks and pull annotations back as human ratings.

* :func:`push` creates or reuses a project and imports items as tasks carrying ``item_id`` and
  metadata — never a judge's output: annotators are blind to the judges and to each other. With
  ``task_keys`` (the command line's default) the task's ``item_id`` is an opaque key the store
  maps back (:mod:`judgekit.store.task_keys`), never the item id. Pushing
  again adds only items the project does not have; tasks go in chunks, in shuffled order.
* :func:`pull` reads annotations through the REST API (paginated) or from an export file (JSON,
  JSON_MIN, CSV), maps each annotator to a stable ``rater_id`` (email, else username), skips
  cancelled annotations, keeps an annotator's latest annotation per task, validates every choice
  against the rubric through :func:`judgekit.store.data.normalise_ratings`, and writes human ratings in
  one transaction. Pulling twice changes nothing; a revised label replaces the stored one and the
  old one goes to ``rating_history``.
"""

from __future__ import annotations

import functools
import inspect
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import pandas as pd

from judgekit.annotation.labelstudio.annotations import (
    PullSummary,
    annotations_to_ratings,
    as_user_id,
    check_same_text,
    items_from_annotations,
)
from judgekit.annotation.labelstudio.client import ENV_URL, LabelStudioClient
from judgekit.annotation.labelstudio.config import (
    check_rubrics,
    label_config,
    parse_marker,
    rubric_marker,
)
from judgekit.annotation.labelstudio.exports import Annotation, from_full_tasks, read_export
from judgekit.annotation.labelstudio.redact import Redactor
from judgekit.annotation.labelstudio.tasks import task_data
from judgekit.annotation.labelstudio.values import as_float
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric
from judgekit.store.database import Store

_F = TypeVar("_F", bound=Callable[..., Any])


def _redacted(fn: _F) -> _F:
    """``fn`` with the message of every :class:`JudgekitError` it raises redacted: the token and
    address of its ``client`` (or those in the environment) and every key in the environment."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        client = sig.bind_partial(*args, **kwargs).arguments.get("client")
        redactor = (client.redactor if isinstance(client, LabelStudioClient)
                    else Redactor.for_label_studio())
        with redactor.guard():
            return fn(*args, **kwargs)

    return cast(_F, run)


@dataclass
class PushSummary:
    """What a push did."""

    project: str
    project_id: int
    created: bool
    rubrics: list[str]
    pushed: int
    already: int
    overlap: int = 0

    def lines(self) -> list[str]:
        how = "created" if self.created else "reused"
        out = [
            f"Label Studio project {self.project!r} (id {self.project_id}, {how}): {self.pushed} new "
            f"tasks, {self.already} already there; rubrics {', '.join(self.rubrics)}."
        ]
        if self.overlap:
            out.append(f"  {self.overlap} tasks ask for at least two annotators.")
        return out


@dataclass(frozen=True)
class PushOptions:
    """How :func:`push` imports tasks.

    ``overlap`` (bool/int Series indexed by item_id) marks items that need ``overlap_annotators``
    distinct annotators; ``meta`` names the metadata columns shown with each task; ``comment``
    adds a free-text comment box. Tasks are imported in shuffled order (seeded by ``seed``), in
    chunks of ``chunk_size``. ``task_keys``: item ids -> the opaque key each task carries in
    place of its item id (called once the items are checked and the project is there; None: the
    item ids themselves, which annotators can read in the Data Manager).
    """

    overlap: pd.Series | None = None
    overlap_annotators: int = 2
    meta: Sequence[str] | str | None = None
    comment: bool = True
    chunk_size: int = 500
    seed: int = 0
    task_keys: Callable[[Sequence[str]], Mapping[str, str]] | None = None
    #: with ``task_keys`` None (the item ids shown): item id -> the key it was pushed with before,
    #: if any, so a task already there under its key is not pushed again
    known_keys: Callable[[Sequence[str]], Mapping[str, str]] | None = None


@_redacted
def push(client: LabelStudioClient, items: pd.DataFrame, rubrics: Sequence[Rubric | str],
         project: str, options: PushOptions | None = None, **fields: Any) -> PushSummary:
    """Create or reuse ``project`` and import the ``items`` it does not have yet.

    ``options`` (or its fields as keywords, :class:`PushOptions`): overlap, metadata shown,
    comment box, chunks and seed. Tasks are imported in shuffled order, so the queue does not
    reveal why an item was chosen. A project set up with other rubrics (or another edit of them)
    is an error: push to a new project.
    """
    opts = PushOptions(**fields) if options is None else replace(options, **fields)
    rubs = check_rubrics(rubrics)
    if len(project.strip()) < 3:
        raise JudgekitError(f"Project name {project!r} is too short; Label Studio needs 3 characters or more.")
    if opts.chunk_size < 1:
        raise JudgekitError("--chunk-size must be at least 1.")
    data = task_data(items, meta=opts.meta)
    ids = [d["item_id"] for d in data]
    dup = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dup:
        raise JudgekitError(f"Item {dup[0]!r} appears twice in the items to push; item ids must be unique.")
    config = label_config(rubs, comment=opts.comment)
    client.whoami()
    existing = client.find_project(project)
    created = existing is None
    pid = _project_id(client, project, rubs, existing, config)
    have = {_task_item_id(t) for t in client.tasks(pid, with_annotations=False)}
    keys = dict(opts.task_keys(ids)) if opts.task_keys is not None else {i: i for i in ids}
    if opts.task_keys is not None:  # a task pushed with the item id (earlier, or --show-ids) is kept
        keys.update({i: i for i in ids if i in have})
    elif opts.known_keys is not None:  # and one pushed with its key
        keys.update({i: k for i, k in opts.known_keys(ids).items() if k in have})
    for d in data:
        d["item_id"] = keys[d["item_id"]]
    new = [d for d in data if d["item_id"] not in have]
    random.Random(f"{opts.seed}:{project}").shuffle(new)
    for i in range(0, len(new), opts.chunk_size):
        client.import_tasks(pid, new[i : i + opts.chunk_size])
    want = ({keys[str(k)] for k, v in opts.overlap.items() if bool(v) and str(k) in keys}
            if opts.overlap is not None else set())
    n_overlap = _set_overlap(client, pid, want, opts.overlap_annotators) if want else 0
    return PushSummary(
        project=project,
        project_id=pid,
        created=created,
        rubrics=[r.ref for r in rubs],
        pushed=len(new),
        already=len(data) - len(new),
        overlap=n_overlap,
    )


def _project_id(client: LabelStudioClient, project: str, rubs: list[Rubric],
                existing: dict[str, Any] | None, config: str) -> int:
    """The id of ``project``: created with the rubrics' labeling config, or an existing project
    judgekit made for the same rubrics (anything else is refused)."""
    if existing is None:
        existing = client.create_project(
            project,
            config,
            "Created by judgekit. Rate blind: you do not see any judge's or other annotator's "
            f"label.\n{rubric_marker(rubs)}",
        )
    else:
        recorded = parse_marker(existing.get("description"))
        wanted = [r.ref for r in rubs]
        if not recorded:
            raise JudgekitError(
                f"Label Studio project {project!r} was not created by judgekit (no rubric record in "
                "its description); push to a new project name."
            )
        if sorted(recorded) != sorted(wanted):
            raise JudgekitError(
                f"Label Studio project {project!r} rates {', '.join(recorded)}, not "
                f"{', '.join(wanted)}; push these rubrics (or this edit of them) to a new project."
            )
    return int(existing["id"])


def _set_overlap(client: LabelStudioClient, pid: int, want: set[str], annotators: int) -> int:
    """Ask ``annotators`` distinct annotators for the wanted tasks; returns how many changed.

    Overlap is set on every wanted task that nobody has annotated yet and that asks for fewer
    annotators, not only on the tasks imported now: a push interrupted between the import and
    this step, or items pushed earlier without a sample, get it on the next push."""
    n_overlap = 0
    for t in client.tasks(pid, with_annotations=False):
        iid = _task_item_id(t)
        if iid in want and not t.get("total_annotations") and as_float(t.get("overlap") or 1) < annotators:
            tid = t.get("id")
            if isinstance(tid, bool) or not isinstance(tid, int):
                raise JudgekitError(
                    f"Label Studio listed a task of item {iid!r} without a whole-number id; is "
                    f"{ENV_URL} a Label Studio server of a supported version?"
                )
            client.set_overlap(tid, annotators)
            n_overlap += 1
    return n_overlap


def _from_project(client: LabelStudioClient, project: str, rubrics: Sequence[Rubric | str] | None,
                  hashes: dict[str, str]) -> tuple[list[Rubric], list[Annotation], str]:
    """``(rubrics, annotations, source)`` of a project through the API: the rubrics it records
    (or ``rubrics``, checked against them), each recorded rubric's hash put in ``hashes``."""
    client.whoami()
    proj = client.project(project)
    recorded = parse_marker(proj.get("description"))
    where = f"Label Studio project {project!r}"
    if rubrics:
        rubs = check_rubrics(rubrics)
        # A rubric the project does not rate would pull nothing (or stamp another version's
        # hash on the labels): say so instead.
        rated = [ref.split("#", 1)[0] for ref in recorded]
        other = [r.id for r in rubs if recorded and r.id not in rated]
        if other:
            raise JudgekitError(
                f"{where} rates {', '.join(rated)}, not {other[0]}; leave out --rubric (the "
                "project's own rubrics are used) or name those."
            )
    elif recorded:
        rubs = check_rubrics([ref.split("#", 1)[0] for ref in recorded])
    else:
        raise JudgekitError(
            f"{where} was not created by judgekit; name the rubrics its choice controls "
            "rate with --rubric (the control names must be the rubric names)."
        )
    for ref in recorded:
        rid, _, h = ref.partition("#")
        if h:
            hashes[rid] = h
    anns = from_full_tasks(
        list(client.tasks(int(proj["id"]))), where,
        fix=f"is {ENV_URL} a Label Studio server of a supported version?",
    )
    return rubs, anns, where


def _note_gone(store: Store, ratings: pd.DataFrame, rubs: list[Rubric], where: str,
               summary: PullSummary) -> None:
    """Ratings an earlier pull took from this source whose annotation is gone (deleted, or turned
    into a skip) are not removed, but they must not go unnoticed: they still count."""
    key = ["item_id", "rater_id", "rubric", "rubric_hash", "trial"]
    before = store.ratings(rater_kind=["human", "reference"])
    earlier = before[(before["source"] == where) & before["rubric"].isin([r.id for r in rubs])]
    if not earlier.empty:
        gone = earlier[key].merge(ratings[key], on=key, how="left", indicator=True)
        n_gone = int((gone["_merge"] == "left_only").sum())
        if n_gone:
            summary.notes.append(
                f"{n_gone} ratings pulled earlier from {where} have no annotation there any more "
                "(deleted or skipped since); they stay in the store and still count."
            )


def _item_ids_of_keys(store: Store, anns: list[Annotation], where: str) -> list[Annotation]:
    """The annotations with each opaque task key (:mod:`judgekit.store.task_keys`) replaced by
    the item id the store maps it to (in ``data`` too); other ids as they are."""
    from judgekit.store.task_keys import PREFIX, items_of_keys, looks_like_key

    found = items_of_keys(store, [a.item_id for a in anns if a.item_id.startswith(PREFIX)])
    stranger = sorted({a.item_id for a in anns if a.item_id not in found and looks_like_key(a.item_id)})
    if stranger:
        stored = store.items(stranger)
        stranger = [k for k in stranger if k not in set(stored["item_id"].astype(str))]
    if stranger:
        raise JudgekitError(f"{where}: task {stranger[0]!r} carries an opaque key this store did not make "
                            f"({len(stranger)} such task(s)), so its item is unknown here; pull into the "
                            f"store that pushed the project ({store.path}'s labels would sit under the keys).")
    if not found:
        return anns
    return [replace(a, item_id=found[a.item_id], data={**a.data, "item_id": found[a.item_id]})
            if a.item_id in found else a for a in anns]


def _task_item_id(task: Mapping[str, Any]) -> str | None:
    """The item id a listed task carries (``None`` for a task without one: not judgekit's)."""
    data = task.get("data")
    iid = data.get("item_id") if isinstance(data, Mapping) else None
    return None if iid is None else str(iid)


# -------------------------------------------------------------------- pull

@_redacted
def pull(
    store: Store,
    project: str | None = None,
    *,
    client: LabelStudioClient | None = None,
    rubrics: Sequence[Rubric | str] | None = None,
    from_export: str | Path | None = None,
    annotator_map: Mapping[Any, str] | None = None,
    reference: Sequence[str] = (),
) -> PullSummary:
    """Pull annotations into ``store`` as human ratings (all or nothing).

    Through the API: ``client`` + ``project`` (rubrics read from the project, or checked against
    ``rubrics``). From a file: ``from_export`` + ``rubrics`` (annotator ids resolved through
    ``client`` when given, or ``annotator_map``).
    """
    users: dict[Any, str] = dict(annotator_map or {})
    hashes: dict[str, str] = {}
    if from_export is not None:
        if not rubrics:
            raise JudgekitError("--from-export needs --rubric for each rubric rated in the export.")
        rubs = check_rubrics(rubrics)
        anns = read_export(from_export, rubs)
        where = f"Label Studio export {Path(from_export).name}"
        needs_lookup = any(
            not (isinstance(a.user, str) and "@" in a.user) and as_user_id(a.user) not in users
            and a.user not in users
            for a in anns if not a.cancelled
        )
        if client is not None and needs_lookup:
            users = {**client.users(), **users}
    else:
        if client is None or not project:
            raise JudgekitError("Give --project (and the server) or --from-export FILE to pull.")
        rubs, anns, where = _from_project(client, project, rubrics, hashes)
        users = {**client.users(), **users}
    anns = _item_ids_of_keys(store, anns, where)
    ratings, summary = annotations_to_ratings(
        anns, rubs, users, where=where, hashes=hashes, reference=reference
    )
    missing_ref = sorted(set(reference) - set(ratings["rater_id"]))
    if missing_ref:
        raise JudgekitError(
            f"{where}: --reference {missing_ref[0]!r} rated nothing there; give the adjudicator's "
            "email (or username) as Label Studio knows it."
        )
    for r in rubs:
        if r.id in hashes and hashes[r.id] != r.hash:
            summary.notes.append(
                f"{r.id} has changed since the push (#{hashes[r.id]} → #{r.hash}): these ratings "
                f"are stored under #{hashes[r.id]}, the edit the annotators saw."
            )
    _note_gone(store, ratings, rubs, where, summary)
    if ratings.empty:
        return summary
    stored_items = store.items(ratings["item_id"].unique().tolist())
    known = set(stored_items["item_id"])
    rated_items = set(ratings["item_id"])
    check_same_text(stored_items, [a for a in anns if a.item_id in rated_items and not a.cancelled], where)
    new_items = items_from_annotations(
        [a for a in anns if a.item_id not in known and a.item_id in rated_items and not a.cancelled],
        where,
    )
    with store.transaction():
        if not new_items.empty:
            summary.items_added = store.put_items(new_items)
        # The store compares with what it holds: new, revised (to history) or unchanged.
        counts = store.put_ratings(ratings)
    summary.new, summary.changed, summary.unchanged = counts.new, counts.changed, counts.unchanged
    return summary
