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
    first stored: by ``label_writes`` (the store's clock, kept when a write's labels come in again
    unchanged, whatever their rows' order), a group it does not record (written before it) first,
    in the order of its first row. ``stored_at`` is the store's time of the write (a rating's own
    ``created_at``, which a file may set, only for such an older group)."""
    cond, args = under(rubric_pairs(rubric))
    cur = store.conn.execute(
        f"SELECT {EFFECTIVE.format(a='')}, item_id, created_at FROM ratings WHERE {cond} AND rater_id = ?"
        " ORDER BY rowid", [*args, rater])
    groups: dict[str, tuple[float, list[str]]] = {}
    for group, item_id, at in cur:
        if group not in groups:
            groups[group] = (float(at), [])
        groups[group][1].append(str(item_id))
    known = {str(g): (k, float(t)) for k, (g, t) in enumerate(store.conn.execute(
        "SELECT provenance, stored_at FROM label_writes ORDER BY stored_at, rowid"))}
    first = {g: k for k, g in enumerate(groups)}
    order = sorted(groups, key=lambda g: (1, known[g][0]) if g in known else (0, first[g]))
    return [Arrival(g, known[g][1] if g in known else groups[g][0], tuple(groups[g][1])) for g in order]


def sample_recorded_at(store: Any, name: str) -> float | None:
    """When sample ``name`` was recorded (None when the store holds no such sample)."""
    row = store.conn.execute("SELECT MIN(created_at) FROM samples WHERE sample = ?", (name,)).fetchone()
    return None if row is None or row[0] is None else float(row[0])
