"""Rubrics: rating scales as data.

A rubric is one YAML file in ``rubrics/`` (and optionally a prompt template beside it). The same
file renders the judge prompt and answer schema (:mod:`judgekit.rubric.prompt`), the Label Studio
labeling config (:mod:`judgekit.annotation.labelstudio`) and validates imported labels
(:meth:`Rubric.normalise`).

A rubric's id is ``name@version``; its :attr:`Rubric.hash` covers the whole content (and the
template), so editing a rubric changes the hash and nothing made under the old one is reused.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from judgekit.core.config import ConfigModel, first_error, read_yaml_mapping
from judgekit.core.paths import read_limited
from judgekit.errors import JudgekitError, excerpt
from judgekit.rubric.vocab import (
    AliasPattern,
    AliasRange,
    View,
    check_vocab,
    match_pattern,
    match_range,
)

Level = Literal["nominal", "ordinal", "interval"]

_CODE_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class Label(ConfigModel):
    """One category of a rubric."""

    model_config = ConfigDict(frozen=True)

    code: str
    value: float
    description: str
    examples: list[str] = Field(default_factory=list)

    @field_validator("code")
    @classmethod
    def _code_is_identifier(cls, v: str) -> str:
        if not _CODE_RE.match(v):
            raise ValueError(f"label code {v!r} must be lower_snake_case (a-z, 0-9, _)")
        return v


class JudgeSpec(ConfigModel):
    """How a judge is asked: an optional template file beside the rubric, and the answer format."""

    model_config = ConfigDict(frozen=True)

    template: str | None = None
    answer_format: Literal["json", "label"] = "json"


class Rubric(ConfigModel):
    """A rating scale. Load with :func:`load_rubric`."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: int
    title: str
    level: Level
    description: str = ""
    instructions: str
    labels: list[Label]
    aliases: dict[str, str] = Field(default_factory=dict)
    #: regular expressions (whole value, case-insensitive) -> code, after the exact aliases
    alias_patterns: list[AliasPattern] = Field(default_factory=list)
    #: number ranges -> code (explicit bounds; :mod:`judgekit.rubric.vocab`)
    alias_ranges: list[AliasRange] = Field(default_factory=list)
    #: named collapses of the codes (:mod:`judgekit.rubric.views`); not part of :attr:`hash`
    views: dict[str, View] = Field(default_factory=dict)
    #: labels are listed in priority order: when several apply, the first listed wins.
    priority_ordered: bool = False
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    #: text of the judge template, read from ``judge.template`` when loaded from a file.
    template_text: str | None = Field(default=None, exclude=True)
    source: str | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _check(self) -> Rubric:
        codes = [lab.code for lab in self.labels]
        if len(codes) < 2:
            raise ValueError("a rubric needs at least two labels")
        dup = sorted({c for c in codes if codes.count(c) > 1})
        if dup:
            raise ValueError(f"duplicate label codes {dup}")
        for alias, code in self.aliases.items():
            if code not in codes:
                raise ValueError(f"alias {alias!r} points to {code!r}, which is not a label code")
        check_vocab(codes, self.alias_patterns, self.alias_ranges, self.views)
        if self.level in ("ordinal", "interval"):
            values = [lab.value for lab in self.labels]
            if values != sorted(values) or len(set(values)) != len(values):
                raise ValueError(
                    f"{self.level} labels must be listed in increasing, distinct value order"
                )
        return self

    # ----------------------------------------------------------------- identity
    @property
    def id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    @cached_property
    def hash(self) -> str:
        """Content hash (12 hex digits) over every field and the template text.

        Fields added after the shipped rubrics were hashed (``alias_patterns``, ``alias_ranges``)
        count only when set, so a rubric that does not use them keeps its hash; ``views`` never
        count (a view does not change what a full-rubric label means; each view has its own
        hash, :mod:`judgekit.rubric.views`)."""
        payload = self.model_dump(mode="json", exclude={"views"})
        for key in _UNHASHED_WHEN_UNSET:
            if not payload.get(key):
                payload.pop(key, None)
        payload["template_text"] = self.template_text
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def ref(self) -> str:
        """``name@version#hash``: the full identity written into verdicts and caches."""
        return f"{self.id}#{self.hash}"

    # ------------------------------------------------------------------ labels
    @property
    def codes(self) -> list[str]:
        """Label codes in rubric order (the category order for ordinal statistics)."""
        return [lab.code for lab in self.labels]

    @cached_property
    def values(self) -> dict[str, float]:
        """Code → the rubric's number for it."""
        return {lab.code: lab.value for lab in self.labels}

    @cached_property
    def _lookup(self) -> dict[str, str]:
        table: dict[str, str] = {}
        for lab in self.labels:
            table[_norm(lab.code)] = lab.code
        for alias, code in self.aliases.items():
            table[_norm(alias)] = code
        return table

    def normalise(self, raw: object) -> str | None:
        """Map a raw label (a code, an alias, any case/spacing) to a code; None if it is none.

        Numbers are accepted when they equal a label's value exactly (e.g. ``0.25``) or when they
        are an alias (e.g. ``"1"`` in an alias table). Order: codes and exact aliases, then
        ``alias_patterns`` (the whole value, case-insensitive), then ``alias_ranges``, then a
        number equal to a label's value (:mod:`judgekit.rubric.vocab`).
        """
        if raw is None:
            return None
        if isinstance(raw, float) and raw != raw:  # NaN
            return None
        text = str(raw)
        code = self._lookup.get(_norm(text))
        if code is not None:
            return code
        if self.alias_patterns:
            code = match_pattern(self.alias_patterns, text, self.source)
            if code is not None:
                return code
        if self.alias_ranges:
            code = match_range(self.alias_ranges, raw)
            if code is not None:
                return code
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            for lab in self.labels:
                if lab.value == float(raw):
                    return lab.code
        return None

    def describe_codes(self) -> str:
        return ", ".join(self.codes)


#: fields left out of the hashed content when empty (see :attr:`Rubric.hash`)
_UNHASHED_WHEN_UNSET = ("alias_patterns", "alias_ranges")


def _norm(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


# ---------------------------------------------------------------------- loading
def shipped_dir(name: str) -> Path:
    """A data folder shipped with judgekit (``rubrics``, ``annotations``): beside the package in
    a source tree or editable install, under ``judgekit/_data/`` in an installed wheel."""
    package = Path(__file__).resolve().parent.parent  # judgekit/ (this module is judgekit/rubric/model.py)
    for candidate in (package.parent / name, package / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise JudgekitError(f"The shipped {name} folder is missing; reinstall judgekit.")


def shipped_rubric_dir() -> Path:
    """The folder of the rubrics shipped with judgekit (source tree or installed wheel)."""
    return shipped_dir("rubrics")


def available_rubrics() -> list[str]:
    """Names of the shipped rubrics."""
    return sorted(p.stem for p in shipped_rubric_dir().glob("*.yaml"))


_CACHE: dict[tuple[str, float], Rubric] = {}


def load_rubric(name_or_path: str | Path | Rubric) -> Rubric:
    """Load a rubric by shipped name (``refusal``, ``refusal@1``) or by path to a YAML file.

    Raises :class:`JudgekitError` with one sentence naming the file and the problem.
    """
    if isinstance(name_or_path, Rubric):
        return name_or_path
    text = str(name_or_path)
    path = Path(text)
    wanted_version: int | None = None
    if not (path.suffix in (".yaml", ".yml") or _exists(path)):
        name, _, ver = text.partition("@")
        if ":" in ver:  # a view's id, refusal@1:binary (judgekit.rubric.views)
            view = excerpt(ver.partition(":")[2], quote=False)
            raise JudgekitError(
                f"Rubric {excerpt(text)} is the id of a view; name the rubric and the view apart: "
                f"--rubric {excerpt(name, quote=False)} --view {view} (in a policy, rubric: and view:)."
            )
        if ver:
            try:
                wanted_version = int(ver)
            except ValueError:
                raise JudgekitError(
                    f"Rubric {text!r}: the version after '@' must be a whole number, e.g. {name}@1."
                ) from None
        path = shipped_rubric_dir() / f"{name}.yaml"
        if not _exists(path):
            raise JudgekitError(
                f"Rubric {excerpt(name)} does not exist; use one of {', '.join(available_rubrics())} "
                "or the path to a rubric YAML file."
            )
    if not _exists(path):
        raise JudgekitError(f"Rubric file {excerpt(str(path), 200, quote=False)} does not exist; check the path.")
    key = (str(path.resolve()), path.stat().st_mtime)
    rubric = _CACHE.get(key)
    if rubric is None:
        rubric = _parse(path)
        _CACHE[key] = rubric
    if wanted_version is not None and rubric.version != wanted_version:
        raise JudgekitError(
            f"Rubric {text!r}: the shipped {rubric.name} is version {rubric.version}, "
            f"not {wanted_version}; use {rubric.id} or a path to the older file."
        )
    return rubric


def rubric_named_in(ref: str | Path, where: str) -> Rubric:
    """:func:`load_rubric` for a rubric that a user-written file names (``where``: "Policy file
    P"): a rubric that does not exist or cannot be read is one sentence naming that file."""
    try:
        return load_rubric(ref)
    except JudgekitError as exc:
        raise JudgekitError(f"{where}: {exc}") from None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # e.g. a name too long for the file system: no such rubric file
        return False


#: the largest judge template judgekit reads (a template is a page of text, not a data file)
MAX_TEMPLATE_BYTES = 1024 * 1024


def _parse(path: Path) -> Rubric:
    try:
        data = read_yaml_mapping(path, what="Rubric file", expect="the rubric's fields")
    except RecursionError:
        raise JudgekitError(_too_deep(path)) from None
    template_text = None
    judge = data.get("judge") or {}
    if isinstance(judge, dict) and isinstance(judge.get("template"), str) and judge["template"]:
        template_text = _read_template(path, path.parent / judge["template"])
    try:
        return Rubric(**data, template_text=template_text, source=str(path))
    except ValidationError as exc:
        raise JudgekitError(f"Rubric file {path}: {first_error(exc)}.") from None
    except TypeError as exc:
        raise JudgekitError(f"Rubric file {path}: {exc}.") from None
    except RecursionError:
        raise JudgekitError(_too_deep(path)) from None


def _too_deep(path: Path) -> str:
    line = _deep_line(path)
    at = f" at line {line}" if line else ""
    return (f"Rubric file {path}: lists or mappings nested too deeply{at} for judgekit to read; a "
            "rubric holds labels, aliases and text, so remove the nesting.")


def _deep_line(path: Path, limit: int = 100) -> int | None:
    """The line where the YAML's nesting first passes ``limit`` levels (found with the token
    scanner, which does not recurse)."""
    import yaml

    opens = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken,
             yaml.BlockSequenceStartToken, yaml.BlockMappingStartToken)
    closes = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken, yaml.BlockEndToken)
    depth = 0
    try:
        for token in yaml.scan(path.read_text(encoding="utf-8")):
            if isinstance(token, opens):
                depth += 1
                if depth > limit:
                    return int(token.start_mark.line) + 1
            elif isinstance(token, closes):
                depth -= 1
    except (yaml.YAMLError, OSError, UnicodeDecodeError, RecursionError):
        return None
    return None


def _read_template(path: Path, tpath: Path) -> str:
    """The text of ``judge.template``: a UTF-8 file beside the rubric of at most
    :data:`MAX_TEMPLATE_BYTES`, inside the rubric's folder (no absolute path, no ``..`` or
    symbolic link leading out: the template is sent to a provider)."""
    folder = path.parent
    try:
        written = tpath.relative_to(folder)
    except ValueError:  # an absolute path: ``folder / "/etc/x"`` is ``/etc/x``
        written = tpath
    where = f"Rubric file {path}: judge.template names {excerpt(str(written), quote=False)}"
    if written.is_absolute():
        raise JudgekitError(
            f"{where}, an absolute path; name a file in the rubric's folder ({folder}) by its "
            "path relative to it."
        )
    try:
        inside = tpath.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a loop of symbolic links
        inside = False
    if not inside:
        raise JudgekitError(
            f"{where}, which is outside the rubric's folder ({folder}) once '..' and symbolic "
            "links are followed; put the template in that folder."
        )
    if not _exists(tpath):
        raise JudgekitError(f"{where}, which is not beside it.")
    if tpath.is_dir():
        raise JudgekitError(f"{where}, which is a folder; name the template file.")
    if not tpath.is_file():
        raise JudgekitError(f"{where}, which is not a regular file; name the template file.")
    raw = read_limited(
        lambda: tpath.open("rb"),
        MAX_TEMPLATE_BYTES,
        unreadable=lambda exc: f"{where}, which cannot be read ({exc.strerror}); check it.",
        too_large=(f"{where}, which is larger than {MAX_TEMPLATE_BYTES // 1024} KiB; a template is a page "
                   "of text, so check the name."),
    )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JudgekitError(
            f"{where}, which is not UTF-8 text (byte {exc.start}); save it as UTF-8."
        ) from None

