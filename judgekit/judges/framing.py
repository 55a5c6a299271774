"""Per-item rubrics and template variables of a panel: one panel file for a study whose items
come in several framings (persona / knowledge-leak studies: framing 1 "answer directly", framing
7 "elaborate a draft", ...).

``rubric_by`` chooses the rubric of each item from one of its metadata columns::

    rubric_by:
      column: framing
      rubrics: {1: leak_direct.yaml, 7: leak_elaboration.yaml}

(keys are the column's values as written, whole numbers or text; an item whose value is not
listed takes the panel's ``rubric`` when there is one, else it is an error). ``variables`` fills
``{{name}}`` placeholders of the rubric's text (instructions, label descriptions, template) from
the item's column ``name``::

    rubric: leak_framed.yaml        # its instructions say "... {{framing_instruction}} ..."
    variables: [framing_instruction]

The panel is run as one sub-panel per (rubric, value of the ``rubric_by`` column, variable
values): its items, that rubric (ratings keep their own rubric id and hash) and the system prompt
with the values filled in — framings that share a rubric are still sub-panels (and agreement
groups) of their own. Only the variables an item's own rubric uses are required of it and are
part of its calls' cache key (:attr:`judgekit.judges.jobs.Items.key_extra`), so another framing
instruction is another call, a value its rubric does not use changes nothing, and a rerun makes
none.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from judgekit.core.config import ConfigModel
from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric, rubric_named_in
from judgekit.rubric.prompt import system_prompt, template_variables
from judgekit.store.items_table import ItemTable
from judgekit.store.schema import is_missing


class RubricBy(ConfigModel):
    """``rubric_by:`` of a panel file."""

    model_config = ConfigDict(frozen=True)

    column: str = Field(min_length=1)
    rubrics: dict[Any, str] = Field(min_length=1)

    @field_validator("rubrics")
    @classmethod
    def _keys(cls, v: dict[Any, str]) -> dict[Any, str]:
        for key in v:
            if isinstance(key, bool) or not isinstance(key, int | str):
                raise ValueError(f"key {key!r} must be a value of the column as written: a whole "
                                 "number or a text")
        texts = [str(k) for k in v]
        dup = sorted({t for t in texts if texts.count(t) > 1})
        if dup:
            raise ValueError(f"value {dup[0]!r} is listed twice (as a number and as a text)")
        return v


@dataclass
class PanelGroup:
    """The items of a panel that share one rubric and one set of variable values."""

    label: str  #: e.g. "framing=1" (empty for a panel without rubric_by or variables)
    rubric: Rubric
    items: ItemTable
    variables: dict[str, str]


def value_text(value: Any) -> str | None:
    """A metadata value as the text it was written as: text as is, a whole number (not a
    boolean) in decimal; None for anything else (a fraction, a list, a boolean)."""
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    return None


def variables_key(variables: dict[str, str]) -> str:
    """What the variable values add to a call's item hash ("" without variables: the keys of a
    panel without variables are those of earlier releases)."""
    if not variables:
        return ""
    return "\x1fvars:" + json.dumps(variables, sort_keys=True, ensure_ascii=False)


def panel_groups(
    *,
    rubric: Rubric | None,
    rubric_by: RubricBy | None,
    variables: list[str],
    items: ItemTable,
    base_dir: Path,
    source: str,
    items_source: str,
) -> list[PanelGroup]:
    """Split the items by rubric and variable values, in the order they first appear.

    Every problem is one sentence naming the panel file (``source``) and the key."""
    where = f"Panel file {source}"
    columns = [str(c) for c in items.columns]
    ids = items.ids
    per_item: list[Rubric] = []
    if rubric_by is not None:
        if rubric_by.column not in columns:
            raise JudgekitError(
                f"{where}: rubric_by.column {rubric_by.column!r} is not a column of {items_source} "
                f"(its columns: {', '.join(columns)})."
            )
        chosen = {str(k): _load(ref, base_dir, where) for k, ref in rubric_by.rubrics.items()}
        for iid, value in zip(ids, items.column(rubric_by.column), strict=True):
            text = None if is_missing(value) else value_text(value)
            hit = chosen.get(text) if text is not None else None
            if hit is None:
                if rubric is None:
                    raise JudgekitError(
                        f"{where}: item {iid!r} has {rubric_by.column} = {_shown(value)}, which "
                        f"rubric_by.rubrics does not list ({', '.join(chosen)}); add it, or give "
                        "the panel a rubric for the other items."
                    )
                hit = rubric
            per_item.append(hit)
    else:
        assert rubric is not None
        per_item = [rubric] * len(ids)
    for name in variables:
        if name not in columns:
            raise JudgekitError(
                f"{where}: variables names {name!r}, which is not a column of {items_source} "
                f"(its columns: {', '.join(columns)})."
            )
    values = {name: items.column(name) for name in variables}
    by_ref = {r.ref: r for r in per_item}
    check_placeholders(by_ref.values(), variables, where)
    # an item's key and required values are only the variables its own rubric uses
    uses = {ref: [n for n in variables if n in template_variables(system_prompt(r))]
            for ref, r in by_ref.items()}
    split = items.column(rubric_by.column) if rubric_by is not None else [None] * len(ids)
    groups: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], list[int]] = {}
    for i, (iid, r) in enumerate(zip(ids, per_item, strict=True)):
        vals = []
        for name in uses[r.ref]:
            v = values[name][i]
            text = None if is_missing(v) else value_text(v)
            if text is None:
                raise JudgekitError(
                    f"{where}: item {iid!r} has {name} = {_shown(v)}; variables are filled with "
                    "a text or a whole number."
                )
            vals.append((name, text))
        # one group per value of the rubric_by column: framings sharing a rubric are still
        # reported (and run) each on its own
        framing = None if rubric_by is None else str(split[i])
        groups.setdefault((r.ref, framing, tuple(vals)), []).append(i)
    out = []
    for (ref, _, pairs), rows in groups.items():
        var = dict(pairs)
        label = ", ".join(
            ([f"{rubric_by.column}={_value_of(items, rubric_by.column, rows)}"] if rubric_by else [])
            + [f"{k}={_short(v)}" for k, v in var.items()]
        )
        out.append(PanelGroup(label, by_ref[ref], items.take(rows), var))
    return out


def check_placeholders(rubrics: Any, variables: list[str], where: str) -> None:
    """Every ``{{name}}`` of the rubrics' text is a declared variable, and every declared
    variable is used by one of them (``where`` names the panel file in the error)."""
    used: set[str] = set()
    for r in rubrics:
        names = template_variables(system_prompt(r))
        missing = sorted(names - set(variables))
        if missing:
            raise JudgekitError(
                f"{where}: rubric {r.id} uses {{{{{missing[0]}}}}}, which the panel does not fill; "
                f"add variables: [{missing[0]}] (an item column of that name)."
            )
        used |= names
    unused = [v for v in variables if v not in used]
    if unused:
        raise JudgekitError(
            f"{where}: variables names {unused[0]!r}, but no rubric of the panel has "
            f"{{{{{unused[0]}}}}} in its text; remove it or add the placeholder."
        )


def _load(ref: str, base: Path, where: str) -> Rubric:
    local = base / ref
    return rubric_named_in(local if local.suffix in (".yaml", ".yml") and local.exists() else ref, where)


def _value_of(items: ItemTable, column: str, rows: list[int]) -> str:
    values = items.column(column)
    texts = sorted({str(values[i]) for i in rows})
    return "|".join(texts)


def _shown(value: Any) -> str:
    return "nothing" if is_missing(value) else repr(value)


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


__all__ = ["PanelGroup", "RubricBy", "check_placeholders", "panel_groups", "value_text", "variables_key"]
