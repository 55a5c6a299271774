"""Recorded labels as a judge: ``replay:<file>#<column>``.

The file (CSV, JSONL or Parquet, path relative to the panel file) has an ``item_id`` column and
the column of recorded outputs. Each cell goes through the same parser as a model's completion,
so a recorded free-text answer ("I'm sorry, I can't do that") is an abstention, not a guess. An
item missing from the file is an ``error`` rating saying so.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.core.values import row_ref
from judgekit.errors import JudgekitError
from judgekit.io.tables import read_table
from judgekit.judges.base import (
    Completion,
    Judge,
    JudgeCallError,
    JudgeContext,
    JudgeEntry,
    JudgeRequest,
    split_spec,
)
from judgekit.store.schema import is_missing


class ReplayJudge(Judge):
    """Answers from a column of a recorded table."""

    local = True
    #: answers depend on the item id, not only on the text: the panel keys calls by id too
    by_item_id = True

    def __init__(self, entry: JudgeEntry, path: Path, column: str) -> None:
        self.spec = entry.model
        self.limit_group = entry.model
        self.path = path
        table = read_table(path)
        if "item_id" not in table.columns or column not in table.columns:
            missing = "item_id" if "item_id" not in table.columns else column
            raise JudgekitError(
                f"Judge {entry.id!r}: {path} has no column {missing!r} "
                f"(it has: {', '.join(map(str, table.columns[:12]))}); fix the spec "
                "replay:<file>#<column>."
            )
        ids = table["item_id"].astype(str).tolist()
        if "trial" in table.columns:
            trials = pd.to_numeric(table["trial"].fillna(0), errors="coerce")
            bad = [i for i, t in enumerate(trials) if not (t == t and float(t).is_integer() and t >= 0)]
            if bad:
                where = row_ref(str(path), bad[0], csv=path.suffix.lower() == ".csv")
                raise JudgekitError(
                    f"Judge {entry.id!r}: {where} has trial {str(table['trial'].iloc[bad[0]])!r}; "
                    "trials are whole numbers 0, 1, 2, ..."
                )
            keys = list(zip(ids, trials.astype(int).tolist(), strict=True))
        else:
            if entry.trials > 1:
                raise JudgekitError(
                    f"Judge {entry.id!r}: {path} has no 'trial' column, so it records one label per "
                    f"item, but the judge asks for trials: {entry.trials}; set trials: 1 or add a "
                    "trial column."
                )
            keys = [(i, 0) for i in ids]
        dup = next((k for k, n in Counter(keys).items() if n > 1), None)
        if dup is not None:
            raise JudgekitError(
                f"Judge {entry.id!r}: {path} records item {dup[0]!r}"
                + (f" trial {dup[1]}" if "trial" in table.columns else "")
                + " twice; keep one row per item" + (" and trial" if "trial" in table.columns else "")
                + "."
            )
        values = [None if is_missing(v) else str(v)
                  for v in table[column].tolist()]
        self.recorded: dict[tuple[str, int], str | None] = dict(zip(keys, values, strict=True))
        self.has_trials = "trial" in table.columns
        self.digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        self.column = column

    def cache_params(self) -> dict[str, Any]:
        return {"file_sha256": self.digest, "column": self.column}

    def answer(self, request: JudgeRequest) -> Completion:
        key = (request.item_id, request.trial if self.has_trials else 0)
        if key not in self.recorded:
            raise JudgeCallError(
                f"{self.path.name} has no recorded label for item {request.item_id!r}"
                + (f" trial {request.trial}" if self.has_trials else ""),
                retryable=False,
            )
        return Completion(raw=self.recorded[key])

    async def complete(self, request: JudgeRequest) -> Completion:
        return self.answer(request)

    async def aclose(self) -> None:
        return None


def make_judge(entry: JudgeEntry, arg: str, ctx: JudgeContext) -> ReplayJudge:
    """Factory for ``replay:<file>#<column>``."""
    file, column = split_spec(entry, arg, spec="replay spec", form="replay:<file>#<column>",
                              example="replay:labels.csv#gpt4_label")
    path = Path(file)
    if not path.is_absolute():
        path = Path(ctx.base_dir) / path
    return ReplayJudge(entry, path, column)
