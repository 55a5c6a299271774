"""What the cells of a ratings file mean, without pandas: a label's rubric code, the rater
columns named on the command line, the item columns judgekit keeps for itself.

Shared by the whole-file import (:mod:`judgekit.store.data`, which re-exports these names) and the
streamed one (:mod:`judgekit.io.ratings_stream`), which imports no pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgekit.core.values import NUMBER, plain_number
from judgekit.rubric.model import Rubric


def parse_rater_map(spec: str | Sequence[str] | None) -> dict[str, str]:
    """``"a,b"`` or ``"alice=col_a,bob=col_b"`` → {rater_id: column}."""
    if not spec:
        return {}
    parts: list[str] = []
    for chunk in [spec] if isinstance(spec, str) else spec:
        parts.extend(p.strip() for p in chunk.split(",") if p.strip())
    out: dict[str, str] = {}
    for p in parts:
        rater, _, col = p.partition("=")
        out[rater.strip()] = (col or rater).strip()
    return out


#: item columns judgekit computes or keeps for itself: never item metadata (a file's own
#: ``content_hash`` would vanish, its ``call_key`` or ``source`` pass for judgekit's)
RESERVED_ITEM_COLUMNS = {
    "content_hash": "judgekit computes it from the item's text",
    "call_key": "it links a judge's rating to its call",
    "source": "judgekit records the file each rating came from",
}


def label_code(rubric: Rubric, raw: Any) -> str | None:
    """The rubric code of a raw label; a number written as text (a CSV cell ``0.25``) is also
    tried as that number, as if the file had been read with numbers inferred."""
    code = rubric.normalise(raw)
    if code is None and isinstance(raw, str) and NUMBER.fullmatch(raw.strip()):
        if plain_number(raw.strip()) is not None:
            code = rubric.normalise(float(raw))
        else:  # 007, +7, 1e1: a label's value, but never an alias range (plain numbers only)
            code = next((lab.code for lab in rubric.labels if lab.value == float(raw)), None)
    return code
