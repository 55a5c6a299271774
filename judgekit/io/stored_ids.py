"""Ids a store written before ids were kept in Unicode NFC may hold in another form.

judgekit keeps item and rater ids in NFC (:func:`judgekit.core.values.nfc`): ``é`` typed as one
character or as ``e`` + a combining accent is one id. A store written by an older judgekit may
hold an id in another form (NFD). Stored ids are never rewritten (verdicts and samples name
them); instead an import's ids that are the same text as such a stored id (the same NFC form)
take the stored form, so the rows attach to the stored item and rater, never to a second one
that looks the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.values import nfc

if TYPE_CHECKING:
    import pandas as pd

    from judgekit.store.database import Store


def stored_other_forms(store: Store) -> dict[str, str]:
    """``{NFC form: stored form}`` of the store's item and rater ids not stored in NFC (almost
    always empty); an empty dict for a store not opened yet (a new store holds no id)."""
    if not store.opened:
        return {}
    out: dict[str, str] = {}
    for sql in ("SELECT item_id FROM items", "SELECT DISTINCT rater_id FROM ratings"):
        for (value,) in store.conn.execute(sql):
            if isinstance(value, str) and not value.isascii() and nfc(value) != value:
                out[nfc(value)] = value
    return out


def as_stored(frame: pd.DataFrame, columns: tuple[str, ...], forms: dict[str, str]) -> pd.DataFrame:
    """``frame`` with the ids of ``columns`` that ``forms`` names in their stored form."""
    if not forms:
        return frame
    changes = {c: frame[c].map(lambda v: forms.get(v, v) if isinstance(v, str) else v)
               for c in columns if c in frame.columns}
    return frame.assign(**changes) if changes else frame
