"""When labels arrived: a rater's ratings grouped by the write that stored them (one import, one
Label Studio pull, one panel run: their provenance, :mod:`judgekit.store.provenance`), in the
order those writes happened, and when each recorded sample was drawn.

``judgekit gate --sequential`` reads its rounds from here: optional stopping is valid only on
rounds in the order the labels arrived, never on an order chosen by whoever wrote a file (the rows
inside one file) or on a sample recorded after its labels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judgekit.store.provenance import EFFECTIVE, rubric_pairs, under


@dataclass(frozen=True)
class Arrival:
    """One write of a rater's labels: its provenance group (``import:<digest>``, ``panel`` …),
    when it was stored (seconds since the epoch) and the items it labelled."""

    group: str
    stored_at: float
    item_ids: tuple[str, ...]


def label_arrivals(store: Any, rubric: Any, rater: str) -> list[Arrival]:
    """``rater``'s ratings under ``rubric`` as the writes that stored them, in the order they were
    stored (the first row each wrote)."""
    cond, args = under(rubric_pairs(rubric))
    cur = store.conn.execute(
        f"SELECT {EFFECTIVE.format(a='')}, item_id, created_at FROM ratings WHERE {cond} AND rater_id = ?"
        " ORDER BY rowid", [*args, rater])
    groups: dict[str, tuple[float, list[str]]] = {}
    for group, item_id, at in cur:
        if group not in groups:
            groups[group] = (float(at), [])
        groups[group][1].append(str(item_id))
    return [Arrival(g, at, tuple(ids)) for g, (at, ids) in groups.items()]


def sample_recorded_at(store: Any, name: str) -> float | None:
    """When sample ``name`` was recorded (None when the store holds no such sample)."""
    row = store.conn.execute("SELECT MIN(created_at) FROM samples WHERE sample = ?", (name,)).fetchone()
    return None if row is None or row[0] is None else float(row[0])
