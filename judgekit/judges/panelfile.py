"""The panel file: its schema (unknown keys are errors), and loading it with its rubric and items.

A panel file (YAML)::

    rubric: refusal                 # shipped name or a path to a rubric YAML
    items: items.jsonl              # CSV/JSONL/Parquet: item_id, prompt or messages, response, ...
    judges:
      - id: haiku
        model: anthropic:claude-haiku-4-5
        trials: 3
        concurrency: 16
        max_rpm: 1000
      - id: keywords
        model: rules:refusal-keywords
    aggregate: {methods: [majority], tie: abstain}

A rubric per item (``rubric_by: {column: framing, rubrics: {1: leak_direct, 7: leak_elaboration}}``)
and template variables filled from the items (``variables: [framing_instruction]``):
:mod:`judgekit.judges.framing`.

Loading sends nothing; :func:`judgekit.judges.panel.run_panel` runs a loaded :class:`Panel`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import ConfigDict, Field, PlainValidator, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from judgekit.core.config import ConfigModel, first_error, read_yaml_mapping
from judgekit.errors import JudgekitError
from judgekit.io.tables import read_items
from judgekit.judges.aggregate import METHODS, TIES, Method, Tie, check_method
from judgekit.judges.base import JudgeEntry
from judgekit.judges.framing import RubricBy, check_placeholders, panel_groups
from judgekit.rubric.model import Rubric, rubric_named_in
from judgekit.store.items_table import ItemTable

if TYPE_CHECKING:
    import pandas as pd


def _text(value: Any) -> Any:
    # Validated as a plain string, as pydantic validates ``str``; which strings are allowed is
    # checked once every field is valid (``AggregateSpec._check``), in one sentence naming them.
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    return value


_MethodName = Annotated[Method, PlainValidator(_text)]
_TieRule = Annotated[Tie, PlainValidator(_text)]


def _majority() -> list[Method]:
    return ["majority"]


class AggregateSpec(ConfigModel):
    """How the panel's derived raters (``panel:<method>``) are computed."""

    model_config = ConfigDict(frozen=True)

    methods: list[_MethodName] = Field(default_factory=_majority)
    tie: _TieRule = "abstain"
    min_votes: int | None = Field(None, ge=1)
    judges: list[str] | None = None

    @model_validator(mode="after")
    def _check(self) -> AggregateSpec:
        for m in self.methods:
            if m not in METHODS:
                raise ValueError(f"unknown aggregate method {m!r}; use {', '.join(METHODS)}")
        if self.tie not in TIES:
            raise ValueError(f"tie {self.tie!r} must be abstain, highest or lowest")
        return self


class PanelFile(ConfigModel):
    """The YAML of a panel."""

    model_config = ConfigDict(frozen=True)

    rubric: str | None = None  #: required unless rubric_by chooses every item's rubric
    items: str
    judges: list[JudgeEntry] = Field(min_length=1)
    aggregate: AggregateSpec | None = Field(default_factory=lambda: AggregateSpec.model_validate({}))
    description: str = ""
    rubric_by: RubricBy | None = None
    variables: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> PanelFile:
        if self.rubric is None and self.rubric_by is None:
            raise ValueError("rubric is missing: name the rubric (e.g. rubric: refusal), or choose "
                             "one per item with rubric_by: {column: ..., rubrics: {...}}")
        if len(set(self.variables)) != len(self.variables):
            raise ValueError("variables names a column twice")
        ids = [j.id for j in self.judges]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"judge id {dup[0]!r} is used twice; give each judge its own id")
        if self.aggregate and self.aggregate.judges:
            unknown = [j for j in self.aggregate.judges if j not in ids]
            if unknown:
                raise ValueError(f"aggregate.judges names {unknown[0]!r}, which is not a judge id")
        return self


class Panel:
    """A loaded, validated panel: the file, its rubric and its items.

    ``items`` may be given as an :class:`~judgekit.store.items_table.ItemTable` (how a panel file's
    items are read: no pandas) or a validated items DataFrame; :attr:`table` is the table,
    :attr:`items` the DataFrame (made on first use)."""

    def __init__(
        self,
        file: PanelFile,
        rubric: Rubric,
        items: ItemTable | pd.DataFrame,
        base_dir: Path,
        source: str,
        groups: list[Panel] | None = None,
        variables: dict[str, str] | None = None,
        label: str = "",
    ) -> None:
        self.file = file
        self.rubric = rubric
        self.base_dir = base_dir
        self.source = source
        #: one sub-panel per (rubric, variable values) when the file has rubric_by or variables
        self.groups: list[Panel] = list(groups or [])
        #: the template variables of this (sub-)panel's items, filled into the system prompt
        self.variables: dict[str, str] = dict(variables or {})
        #: which items a sub-panel has ("framing=1")
        self.label = label
        self._frame: pd.DataFrame | None = None
        if isinstance(items, ItemTable):
            self.table = items
        else:
            self.table, self._frame = ItemTable.from_frame(items), items

    @property
    def items(self) -> pd.DataFrame:
        """The items as a DataFrame (as :func:`judgekit.store.data.validate_items` returns them)."""
        if self._frame is None:
            self._frame = self.table.frame()
        return self._frame

    @property
    def judges(self) -> list[JudgeEntry]:
        return list(self.file.judges)

    def __repr__(self) -> str:
        return f"Panel({self.source!r}, rubric={self.rubric.ref!r}, items={len(self.table)}, label={self.label!r})"


def load_panel(path: str | Path) -> Panel:
    """Read and validate a panel file, its rubric and its items (sends nothing)."""
    p = Path(path)
    data = read_yaml_mapping(p, what="Panel file", expect="rubric, items and judges")
    return panel_from_dict(data, base_dir=p.parent, source=str(p))


def panel_from_dict(data: dict[str, Any], *, base_dir: str | Path = ".", source: str = "panel") -> Panel:
    """Build a :class:`Panel` from the parsed YAML (paths relative to ``base_dir``)."""
    base = Path(base_dir)
    try:
        pf = PanelFile(**data)
    except ValidationError as exc:
        raise JudgekitError(f"Panel file {source}: {first_error(exc)}.") from None
    rubric = None
    if pf.rubric is not None:
        rubric_ref = pf.rubric
        local = base / rubric_ref
        rubric = rubric_named_in(local if local.suffix in (".yaml", ".yml") and local.exists() else rubric_ref,
                                 f"Panel file {source}")
        if pf.aggregate:
            for m in pf.aggregate.methods:
                check_method(m, rubric)
    _check_entry_codes(pf, source)
    items_path = base / pf.items
    items = read_items(items_path)
    groups = []
    if pf.rubric_by is not None or pf.variables or rubric is None:
        groups = panel_groups(rubric=rubric, rubric_by=pf.rubric_by, variables=list(pf.variables),
                              items=items, base_dir=base, source=source, items_source=str(items_path))
    elif rubric is not None:  # a placeholder no variable fills is an error here too
        check_placeholders([rubric], [], f"Panel file {source}")
    main = rubric if rubric is not None else groups[0].rubric
    for g in groups:
        if pf.aggregate and g.rubric is not rubric:
            for m in pf.aggregate.methods:
                check_method(m, g.rubric)
    subs = [Panel(file=pf, rubric=g.rubric, items=g.items, base_dir=base, source=source,
                  variables=g.variables, label=g.label) for g in groups]
    return Panel(file=pf, rubric=main, items=items, base_dir=base, source=source, groups=subs)


def _check_entry_codes(pf: PanelFile, source: str) -> None:
    """``codes:`` (a rule judge's answer codes -> the rubric's) is for ``rules:`` judges: a model
    judge is asked in the rubric's own codes, and every judge's answers go through the rubric's
    aliases and alias patterns."""
    for k, entry in enumerate(pf.judges):
        if entry.codes and not entry.model.strip().lower().startswith("rules:"):
            raise JudgekitError(
                f"Panel file {source}: judges[{k}] ({entry.id}) has 'codes', which maps the answers "
                "of a rules: judge; this judge's answers go through the rubric's aliases, so remove "
                "'codes' and add aliases or alias_patterns to the rubric for other spellings."
            )


def panel_rater_ids(panel: Panel) -> list[str]:
    """The rater ids a panel writes: its judges, then its aggregates."""
    ids = [e.id for e in panel.judges]
    spec = panel.file.aggregate
    if spec and len(spec.judges or ids) >= 2:
        ids += [f"panel:{m}" for m in spec.methods]
    return ids


__all__ = ["AggregateSpec", "Panel", "PanelFile", "load_panel", "panel_from_dict", "panel_rater_ids"]
