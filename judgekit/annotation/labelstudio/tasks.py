"""Items as Label Studio task payloads, blind to every judge's labels.

A task carries ``item_id``, the conversation and the response. Item metadata (the model that wrote
the response, its source, ...) is left out by default — knowing which model answered can sway an
annotator — and sent only when asked for (``meta="all"`` or named columns; ``--meta`` on the
command line). Never a judge's output: with ``"all"``, metadata columns whose names look like
someone's label (or a judge's reasons for it) are left out unless named explicitly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from judgekit.annotation.labelstudio.values import is_missing
from judgekit.errors import JudgekitError

_TEXT_COLUMNS = ("item_id", "prompt", "messages", "response", "content_hash")
#: metadata columns that look like someone's label (or a judge's reasons for it) are never sent
#: to annotators.
_LABELLIKE = re.compile(
    r"(label|judge|score|rating|annotation|verdict|pred|gold|answer|rationale|explanation|refus)",
    re.I,
)


def task_data(items: pd.DataFrame, *, meta: Sequence[str] | str | None = None) -> list[dict[str, Any]]:
    """Task ``data`` dicts for items: ``item_id``, ``messages``, ``response`` and metadata.

    A single prompt becomes a one-turn conversation. ``meta`` names the metadata columns to carry:
    None (the default) carries none — annotators see the text, not which model wrote it;
    ``"all"`` every metadata column except label-like names such as ``gpt4_label`` (annotators
    must not see anyone's labels); a list, exactly those columns.
    """
    if "item_id" not in items.columns:
        raise JudgekitError("Items to push need an 'item_id' column.")
    if "response" not in items.columns:
        raise JudgekitError("Items to push need a 'response' column (the text people rate).")
    if meta is None:
        meta = []
    elif isinstance(meta, str):
        if meta != "all":
            raise JudgekitError(f"--meta {meta!r}: give 'all' or a list of columns.")
        meta = [c for c in items.columns if c not in _TEXT_COLUMNS and not _LABELLIKE.search(str(c))]
    else:
        missing = [c for c in meta if c not in items.columns]
        if missing:
            raise JudgekitError(f"--meta names {missing[0]!r}, which is not an item column; fix it.")
        clash = [c for c in meta if c in _TEXT_COLUMNS]
        if clash:
            raise JudgekitError(f"--meta names {clash[0]!r}, which is always sent; remove it.")
    out = []
    for rec in items.to_dict("records"):
        iid = str(rec["item_id"])
        msgs = rec.get("messages")
        if is_missing(msgs):
            prompt = rec.get("prompt")
            if is_missing(prompt):
                raise JudgekitError(f"Item {iid!r} has neither a prompt nor messages; add one.")
            msgs = [{"role": "user", "content": str(prompt)}]
        elif isinstance(msgs, str):
            try:
                msgs = json.loads(msgs)
            except ValueError:
                raise JudgekitError(f"Item {iid!r}: 'messages' is not a JSON list; fix it.") from None
        if not isinstance(msgs, list) or not all(isinstance(m, dict) for m in msgs):
            raise JudgekitError(f"Item {iid!r}: 'messages' must be a list of {{role, content}}.")
        response = rec.get("response")
        if is_missing(response):
            raise JudgekitError(f"Item {iid!r} has no response text; people need the text to rate.")
        data: dict[str, Any] = {
            "item_id": iid,
            "messages": [
                {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
                for m in msgs
            ],
            "response": str(response),
        }
        for c in meta:
            v: Any = rec.get(c)
            if not is_missing(v):
                data[str(c)] = _json_safe(v)
        out.append(data)
    return out


def _json_safe(v: Any) -> Any:
    """A metadata value as JSON can carry it (numpy scalars unwrapped, anything else as text)."""
    if hasattr(v, "item") and not isinstance(v, list | dict):
        v = v.item()
    if isinstance(v, str | int | float | bool | list | dict):
        return v
    return str(v)
