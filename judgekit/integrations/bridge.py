"""Every call the integrations make into judgekit, in one place.

The tool adapters (:mod:`judgekit.integrations.inspect_scorer`, the importers) call only this
module, so a judgekit module that moves changes one import here. What it offers:

* :func:`gated_judge` — a judge of a panel (or a judge spec) under a rubric, checked against a
  verdict before anything is sent (:func:`judgekit.verdict.trust.require_trusted`);
* :func:`judge_items` — rate items with that judge through the panel machinery
  (:func:`judgekit.judges.panel.run_panel`): the same prompt, the same call cache (an item
  already judged is not paid twice) and the ratings in the store.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgekit.core.hashing import judge_hash
from judgekit.core.redact import redact
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.judges.base import JudgeContext, JudgeEntry, build_judge, spec_params
from judgekit.rubric.model import Rubric, load_rubric
from judgekit.rubric.prompt import answer_schema, system_prompt

__all__ = ["GatedJudge", "ItemRating", "JudgekitError", "UntrustedJudgeError", "gated_judge", "import_rows",
           "judge_items", "output_item_id"]

#: one panel run at a time per process: the store is one SQLite file, and a scorer runs its
#: samples concurrently (each run is short: one item, or a cached answer)
_RUN_LOCK = threading.Lock()


@dataclass(frozen=True)
class GatedJudge:
    """A judge that a verdict trusts for a rubric, and the store its ratings go to."""

    entry: JudgeEntry
    rubric: Rubric
    store: Path
    verdict: str  #: where the verdict was read from (for messages)
    judge_hash: str  #: the judge's identity hash (spec and parameters), as the verdict records it


@dataclass(frozen=True)
class ItemRating:
    """The judge's rating of one item: ``status`` is ``ok``, ``abstain`` or ``error``; ``label``
    and ``value`` are None unless ``ok``."""

    item_id: str
    label: str | None
    value: float | None
    status: str
    rationale: str | None


def output_item_id(tool: str, prompt: Any, output: Any) -> str:
    """The item id of an output a tool gives without one: ``<tool>:`` + a digest of the prompt
    and the output (the same for the grader and the importer of that tool)."""
    import hashlib

    blob = json.dumps([prompt, output], ensure_ascii=False, sort_keys=True, default=str)
    return f"{tool}:" + hashlib.sha256(blob.encode()).hexdigest()[:16]


def _entry_and_rubric(
    judge: str | Mapping[str, Any], rubric: str | Path | None, panel: str | Path | None
) -> tuple[JudgeEntry, Rubric]:
    """The judge entry and its rubric: from a panel file (``judge`` its id) or from a judge spec
    (``judge`` a mapping of panel-file keys: id, model, temperature, ...)."""
    if panel is not None:
        import yaml

        from judgekit.judges.panelfile import PanelFile

        p = Path(panel)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
            pf = PanelFile(**data)
        except OSError as exc:
            raise JudgekitError(f"Panel file {p}: cannot read it ({exc.strerror}); check the path.") from None
        except Exception as exc:  # a YAML or validation error
            raise JudgekitError(f"Panel file {p} is not a valid panel file ({type(exc).__name__}); "
                                "run `judgekit judge PANEL --dry-run` to see why.") from None
        entry = next((e for e in pf.judges if e.id == judge), None)
        if entry is None:
            raise JudgekitError(f"Panel file {p} has no judge {judge!r} "
                                f"(it has {', '.join(e.id for e in pf.judges)}); name one of them.")
        ref = rubric if rubric is not None else pf.rubric
        if ref is None:
            raise JudgekitError(f"Panel file {p} names no rubric; pass rubric=.")
        local = p.parent / str(ref)
        return entry, load_rubric(local if local.suffix in (".yaml", ".yml") and local.exists() else ref)
    if not isinstance(judge, Mapping):
        raise JudgekitError(f"Judge {judge!r}: give panel= (the panel file that defines it) or the judge "
                            "as a mapping of panel-file keys, e.g. {'id': 'gpt', 'model': 'openai:gpt-4o-mini'}.")
    if rubric is None:
        raise JudgekitError("No rubric given; pass rubric= (a shipped name such as 'refusal' or a YAML path).")
    try:
        entry = JudgeEntry(**dict(judge))
    except Exception as exc:
        raise JudgekitError(f"Judge {dict(judge)!r} is not a valid panel-file judge entry ({exc}).") from None
    return entry, load_rubric(rubric)


def _context(rubric: Rubric, base_dir: Path, *, dry_run: bool) -> JudgeContext:
    return JudgeContext(rubric=rubric, system=system_prompt(rubric), schema=answer_schema(rubric),
                        base_dir=str(base_dir), dry_run=dry_run)


def _judge_hash(entry: JudgeEntry, rubric: Rubric, base_dir: Path) -> str:
    """The identity hash a verdict records for this judge (:func:`judgekit.core.hashing.judge_hash`,
    as :func:`judgekit.store.judge_identity.judge_identity` makes it from the judge's calls), from
    the panel entry about to be used, never from the store's latest call: a judge whose spec or
    parameters changed since the gate must not match its verdict. Built without a key."""
    judge = build_judge(entry, _context(rubric, base_dir, dry_run=True))
    return judge_hash(entry.id, redact(entry.model), json.loads(spec_params(entry, judge)))


def gated_judge(
    *,
    judge: str | Mapping[str, Any],
    verdict: str | Path | None,
    store: str | Path,
    rubric: str | Path | None = None,
    panel: str | Path | None = None,
    figure: str | None = None,
) -> GatedJudge:
    """The judge, once its verdict is checked; raises :class:`UntrustedJudgeError` (one sentence
    naming the verdict and what to run) before anything is sent when the verdict does not trust
    it: not passed (or ``figure`` not certified), another rubric or rubric version, another judge
    spec or parameters, or a store changed since the gate."""
    from judgekit.store.database import Store
    from judgekit.verdict.trust import require_trusted

    entry, rub = _entry_and_rubric(judge, rubric, panel)
    base = Path(panel).parent if panel is not None else Path.cwd()
    jhash = _judge_hash(entry, rub, base)
    db = Store.open_existing(store)
    try:
        require_trusted(str(verdict) if verdict is not None else None, judge=entry.id, rubric=rub,
                        judge_hash=jhash, store=db, figure=figure)
    except UntrustedJudgeError as exc:
        if verdict is None or str(verdict) in str(exc):
            raise
        raise UntrustedJudgeError(f"Verdict {verdict}: {exc}") from None  # which verdict said so
    finally:
        db.close()
    return GatedJudge(entry=entry, rubric=rub, store=Path(store), verdict=str(verdict), judge_hash=jhash)


def judge_items(gj: GatedJudge, items: Sequence[Mapping[str, Any]], *, source: str) -> list[ItemRating]:
    """Rate ``items`` (``item_id``, ``prompt`` or ``messages``, ``response``, metadata) with the
    gated judge through the panel machinery, and return its rating of each, in order. An item
    whose text the store holds under a content id (``judgekit import --id-from content``) is rated
    under that id. ``source`` names where the items come from (stored with them)."""
    import pandas as pd

    from judgekit.judges.panel import run_panel
    from judgekit.judges.panelfile import Panel, PanelFile
    from judgekit.store.database import Store
    from judgekit.store.items_table import content_id_twins

    frame = pd.DataFrame([dict(i) for i in items])
    frame["item_id"] = frame["item_id"].astype(str)
    with _RUN_LOCK:
        db = Store(str(gj.store))
        try:
            twins = dict(content_id_twins(db, frame))
            if twins:
                frame["item_id"] = [twins.get(i, i) for i in frame["item_id"]]
            # an item stored already keeps its metadata: the gate hashed it (its slices, models)
            stored = frame["item_id"].isin(set(db.items(item_ids=list(frame["item_id"]))["item_id"].astype(str)))
            meta = [c for c in frame.columns if c not in ("item_id", "prompt", "messages", "response")]
            frame[meta] = frame[meta].astype(object).where(~stored, None)
            pf = PanelFile(rubric=gj.rubric.ref, items=source, judges=[gj.entry], aggregate=None)
            panel = Panel(file=pf, rubric=gj.rubric, items=frame, base_dir=Path.cwd(), source=source)
            run_panel(panel, db)
            got = db.ratings(rubric=gj.rubric, rater_ids=[gj.entry.id],
                             columns=["item_id", "label", "value", "trial", "status", "rationale"])
        finally:
            db.close()
    by_id = {str(r["item_id"]): r for r in got.to_dict("records") if int(r["trial"]) == 0}
    out = []
    for iid in frame["item_id"]:
        r = by_id.get(iid)
        if r is None:
            out.append(ItemRating(iid, None, None, "error", "no rating was stored"))
            continue
        ok = r["status"] == "ok"
        value = r["value"] if ok and r["value"] is not None else None
        out.append(ItemRating(iid, str(r["label"]) if ok else None, None if value is None else float(value),
                              str(r["status"]), None if r["rationale"] is None else str(r["rationale"])))
    return out


def import_rows(store: str | Path, rows: Sequence[Mapping[str, Any]], rubric: str | Path, *, source: str) -> Any:
    """``judgekit import`` of long rating rows (``item_id``, item columns, ``rater_id``,
    ``rater_kind``, ``label``, ``status``, ``rationale``) written as ``<source>.jsonl``, returning
    its :class:`judgekit.io.ratings.ImportSummary`: every rule of the import applies (labels
    through the rubric's aliases, one transaction, the rating history kept)."""
    import tempfile

    from judgekit.io.ratings import import_ratings
    from judgekit.store.deferred import DeferredStore

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{source}.jsonl"
        path.write_text("".join(json.dumps(dict(r), ensure_ascii=False, default=str) + "\n" for r in rows),
                        encoding="utf-8")
        with DeferredStore(str(store)) as db:
            return import_ratings(db, path, load_rubric(rubric))


def corrected_share(judged: Mapping[str, bool], human: Mapping[str, bool]) -> float:
    """The share of units with a property (a label among some), the judge's share corrected for
    its error by the units people labelled too: PPI++ (:func:`judgekit.stats.ppi.ppi_mean`,
    each unit its own cluster). ``judged``: unit → whether the judge's label has it; ``human``:
    unit → whether the people's label has it, for the labelled units (those the judge did not
    rate are left out). NaN when not estimable (fewer than 2 labelled units)."""
    from judgekit.stats.ppi import ppi_mean

    ids = list(judged)
    lab = [i for i in human if i in judged]
    if len(lab) < 2:
        return float("nan")
    est = ppi_mean([float(judged[i]) for i in ids], ids, [float(judged[i]) for i in lab],
                   [float(human[i]) for i in lab], lab)
    return float(est.estimate)


def human_labels(store: str | Path, rubric: str | Path, rater: str) -> dict[str, str]:
    """item id → the label ``rater`` gave under ``rubric`` (its ``ok`` ratings of trial 0)."""
    from judgekit.store.database import Store

    db = Store.open_existing(store)
    try:
        got = db.ratings(rubric=load_rubric(rubric), rater_ids=[rater], columns=["item_id", "label", "trial", "status"])
    finally:
        db.close()
    return {str(r["item_id"]): str(r["label"]) for r in got.to_dict("records")
            if r["status"] == "ok" and int(r["trial"]) == 0}
