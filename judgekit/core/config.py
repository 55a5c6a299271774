"""User-written config files (rubrics, policies, panels, sample specs, criteria): reading YAML and
turning validation errors into one sentence that names the key and the fix.

Every such file is validated by a model built on :class:`ConfigModel`: unknown keys are errors
(a typo is not a no-op) and values are kept exactly as written or refused, never converted
(``"200"``, ``200.0`` or ``true`` is not the integer 200 or 1, ``"yes"`` or ``1`` is not ``true``;
an integer is a number where a number is expected), and a number must be finite (no ``.nan``,
``.inf``).

The YAML is read strictly (:func:`load_yaml`): a key written twice in one mapping, at any depth, is
an error naming its line (YAML would silently keep the last one). Merge keys (``<<: *defaults``)
keep their YAML meaning (the mapping's own keys override the merged ones), but a key that two
merged mappings both bring is an error unless the mapping sets it itself (YAML says the first
wins, PyYAML took the last: ambiguous). A file is read only up to :data:`MAX_YAML_BYTES` (2 MB; a rubric or policy is
a few KB), aliases may not expand a document beyond :data:`_MAX_YAML_EXPANDED` characters (a
"billion laughs" file of 1.5 KB would otherwise take gigabytes), an alias may not contain itself,
and nesting is limited to :data:`_MAX_YAML_DEPTH` levels.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from judgekit.core.paths import open_input, read_limited
from judgekit.errors import JudgekitError, excerpt

#: the largest config file judgekit reads, in bytes
MAX_YAML_BYTES = 2_000_000
#: aliases expanded, a document may hold at most this many characters (scalars) and nodes
_MAX_YAML_EXPANDED = 2 * MAX_YAML_BYTES
#: the deepest nesting of lists and mappings (aliases expanded)
_MAX_YAML_DEPTH = 100

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"
_INT = "tag:yaml.org,2002:int"


class ConfigModel(BaseModel):
    """The base of every model of a user-written config file (see the module docstring): unknown
    keys are errors, values are never converted (pydantic's strict mode, which still takes an
    integer for a float) and numbers are finite."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class YamlProblem(Exception):
    """What :func:`load_yaml` refuses: ``line`` (1-based, or None) and a phrase."""

    def __init__(self, line: int | None, phrase: str) -> None:
        super().__init__(phrase)
        self.line = line
        self.phrase = phrase


def load_yaml(text: str) -> Any:
    """Parse one YAML document safely and strictly (see the module docstring).

    Raises :class:`YamlProblem` for a duplicate key, an alias bomb, a recursive alias or too deep
    nesting, and ``yaml.YAMLError`` for a syntax error.
    """
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_tree(node, loader)
        except RecursionError:  # the pure-Python composer on a very deep document
            raise YamlProblem(None, f"it is nested more than {_MAX_YAML_DEPTH} levels deep") from None
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_tree(root: yaml.Node, loader: Any) -> None:
    """Duplicate keys, expanded size, depth and recursion of a composed document, without
    expanding it: a node shared through aliases is measured once (iteratively, no recursion)."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()
    keys: dict[int, dict[Any, Any]] = {}
    stack: list[tuple[yaml.Node, str, bool]] = [(root, "", False)]
    while stack:
        node, path, done = stack.pop()
        nid = id(node)
        if done:
            kids = _children(node)
            size[nid] = 1 + sum(size[id(k)] for _, k in kids)
            height[nid] = 1 + max((height[id(k)] for _, k in kids), default=0)
            open_nodes.discard(nid)
            if size[nid] > _MAX_YAML_EXPANDED:
                raise YamlProblem(
                    None,
                    f"its aliases expand it beyond {_MAX_YAML_EXPANDED:,} characters (judgekit reads "
                    f"config files of at most {MAX_YAML_BYTES // 1_000_000} MB, aliases expanded); "
                    "write the repeated parts out instead of aliasing them",
                )
            if height[nid] > _MAX_YAML_DEPTH:
                raise YamlProblem(
                    node.start_mark.line + 1,
                    f"{_where(path) or 'the document'} is nested more than {_MAX_YAML_DEPTH} levels "
                    "deep; flatten it",
                )
            continue
        if nid in size:
            continue  # an alias of a node measured already
        if nid in open_nodes:
            raise YamlProblem(
                node.start_mark.line + 1,
                f"an alias refers to a node that contains it{_in(path)}; remove the alias",
            )
        if isinstance(node, yaml.ScalarNode):
            _check_int(node, path)
            size[nid] = 1 + len(node.value)
            height[nid] = 0
            continue
        open_nodes.add(nid)
        stack.append((node, path, True))
        if isinstance(node, yaml.MappingNode):
            _check_keys(node, path, loader, keys)
        for sub, kid in reversed(_children(node)):
            stack.append((kid, _join(path, sub), False))


def _check_int(node: yaml.ScalarNode, path: str) -> None:
    """An integer longer than Python converts (``sys.get_int_max_str_digits``, 4,300 digits) is
    refused here, with its line, rather than as a ValueError when the document is constructed."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    if node.tag != _INT or not limit or len(node.value) <= limit:
        return
    digits = node.value.lstrip("+-").replace("_", "")
    if digits.isdigit() and len(digits) > limit:
        raise YamlProblem(
            node.start_mark.line + 1,
            f"{_where(path) or 'a value'} is an integer of {len(digits):,} digits, more than the "
            f"{limit:,} judgekit reads; check the value",
        )


def _children(node: yaml.Node) -> list[tuple[Any, yaml.Node]]:
    """(path part, child node) of a collection: list indices, or key text and every key/value."""
    if isinstance(node, yaml.SequenceNode):
        return list(enumerate(node.value))
    if isinstance(node, yaml.MappingNode):
        out: list[tuple[Any, yaml.Node]] = []
        for k, v in node.value:
            name = k.value if isinstance(k, yaml.ScalarNode) else "?"
            out += [(None, k), (name, v)]
        return out
    return []


def _join(path: str, sub: Any) -> str:
    if sub is None:  # a key node: reported under its mapping
        return path
    if isinstance(sub, int):
        return f"{path}[{sub}]"
    sub = str(sub)
    if len(sub) > 40:
        sub = sub[:39] + "…"
    return f"{path}.{sub}" if path else sub


def _where(path: str) -> str:
    return excerpt(path, 120, quote=False) if path else ""


def _in(path: str) -> str:
    return f" in {_where(path)}" if path else ""


def _check_keys(node: yaml.MappingNode, path: str, loader: Any, memo: dict[int, dict[Any, Any]]) -> None:
    """A key written twice in one mapping is an error (a second ``<<`` merge key too), and so is a
    key that two merged mappings both bring (YAML says the first wins, PyYAML takes the last)
    unless the mapping sets it itself."""
    own = _own_keys(node, path, loader)
    merged: dict[Any, tuple[int, str]] = {}
    for source in _merge_sources(node):
        keys = _effective_keys(source, loader, memo, set())
        for key, (line, text) in keys.items():
            if key in merged and key not in own:
                raise YamlProblem(
                    line,
                    f"key {excerpt(text)} comes from two merged mappings{_in(path)} (lines "
                    f"{merged[key][0]} and {line}); set it in the mapping itself or in one of them",
                )
            merged.setdefault(key, (line, text))
    memo[id(node)] = {**merged, **own}


def _own_keys(node: yaml.MappingNode, path: str, loader: Any) -> dict[Any, tuple[int, str]]:
    seen: dict[Any, tuple[int, str]] = {}
    merges = 0
    for key_node, _ in node.value:
        line = key_node.start_mark.line + 1
        if key_node.tag == _MERGE:
            merges += 1
            if merges > 1:
                raise YamlProblem(
                    line,
                    f"merge key '<<' appears twice{_in(path)}; merge both in one: <<: [*a, *b]",
                )
            continue
        if not isinstance(key_node, yaml.ScalarNode):
            continue  # a collection as a key: refused when the document is constructed
        try:
            key = loader.construct_object(key_node)
            first = seen.get(key)
        except (yaml.YAMLError, TypeError, ValueError):
            continue  # an invalid or unhashable key: refused when the document is constructed
        if first is not None:
            first_line, first_text = first
            same = (f"appears twice{_in(path)} (first at line {first_line})"
                    if first_text == key_node.value else
                    f"is the same key as {excerpt(first_text)} at line {first_line}{_in(path)}")
            raise YamlProblem(line, f"key {excerpt(key_node.value)} {same}; keep one")
        seen[key] = (line, key_node.value)
    return seen


def _merge_sources(node: yaml.MappingNode) -> list[yaml.MappingNode]:
    """The mappings a ``<<`` key of ``node`` merges (others are refused at construction)."""
    for key_node, value in node.value:
        if key_node.tag == _MERGE:
            items = value.value if isinstance(value, yaml.SequenceNode) else [value]
            return [m for m in items if isinstance(m, yaml.MappingNode)]
    return []


def _effective_keys(node: yaml.MappingNode, loader: Any, memo: dict[int, dict[Any, Any]],
                    visiting: set[int]) -> dict[Any, tuple[int, str]]:
    """The keys a mapping ends up with, merges included (memoised; a cycle is refused later)."""
    nid = id(node)
    if nid in memo:
        return memo[nid]
    if nid in visiting:
        return {}
    visiting.add(nid)
    keys: dict[Any, tuple[int, str]] = {}
    for source in _merge_sources(node):
        for key, where in _effective_keys(source, loader, memo, visiting).items():
            keys.setdefault(key, where)
    keys.update(_own_keys(node, "", loader))
    visiting.discard(nid)
    return keys


def read_yaml_mapping(path: str | Path, *, what: str, expect: str) -> dict[str, Any]:
    """The top-level mapping of a YAML file; ``what`` names the file ("Policy file"), ``expect``
    says what the mapping should hold ("rubric, judges and checks"). Read strictly and within
    bounds (see the module docstring); every problem is one sentence naming the file."""
    p = Path(path)
    shown = excerpt(str(p), 200, quote=False)
    try:
        exists = p.exists()
    except OSError as exc:  # e.g. a name too long for the file system
        raise JudgekitError(f"{what} {shown} cannot be read ({exc.strerror}); check the path.") from None
    if not exists:
        raise JudgekitError(f"{what} {p} does not exist; check the path.")
    raw = read_limited(
        lambda: open_input(p, what),  # a FIFO or device is refused, never read
        MAX_YAML_BYTES,
        unreadable=lambda exc: (f"{what} {p} is a folder; give the YAML file."
                                if isinstance(exc, IsADirectoryError)
                                else f"{what} {p} cannot be read ({exc.strerror}); check the file."),
        too_large=(f"{what} {p} is larger than {MAX_YAML_BYTES // 1_000_000} MB, the most judgekit reads "
                   "for a config file (a rubric or policy is a few KB); check that it is the right file."),
    )
    try:
        data = load_yaml(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise JudgekitError(f"{what} {p} is not UTF-8 text; save it as UTF-8.") from None
    except YamlProblem as exc:
        where = f" line {exc.line}" if exc.line is not None else ""
        raise JudgekitError(f"{what} {p}{where}: {exc.phrase}.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None)
        why = f" ({excerpt(str(problem), quote=False)})" if problem else ""
        raise JudgekitError(f"{what} {p}: invalid YAML{where}{why}; fix the syntax.") from None
    if not isinstance(data, dict):
        raise JudgekitError(f"{what} {p}: expected a mapping with {expect} at the top.")
    return data


def format_loc(loc: Sequence[Any]) -> str:
    """``("judges", 2, "modle")`` → ``judges[2].modle``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def describe_error(err: Any, key: str | None = None) -> str:
    """One pydantic error as a phrase: unknown key / missing key / the key and the problem."""
    key = format_loc(err["loc"]) if key is None else key
    if err["type"] == "extra_forbidden":
        return f"unknown key {excerpt(key)} (a typo?); remove or rename it"
    if err["type"] == "missing":
        return f"missing required key {excerpt(key)}"
    msg = str(err["msg"]).removeprefix("Value error, ") + _written(err)
    return f"{excerpt(key, quote=False)}: {msg}" if key else msg


#: pydantic's strict type errors and what the key takes
_WANTS = {"int_type": "a whole number", "float_type": "a number", "bool_type": "true or false"}


def _written(err: Any) -> str:
    """``, not the text '200' (write it without quotes)``: what a strict type error refused (a
    config value is never converted, see :class:`ConfigModel`), and how to write it."""
    if err["type"] not in _WANTS or "input" not in err:
        return ""
    value = err["input"]
    fix = ""
    if isinstance(value, str):
        got = f"the text {excerpt(value)}"
        if err["type"] != "bool_type" and _is_number(value):
            fix = " (write the number without quotes)"
        elif err["type"] == "bool_type" and value.strip().lower() in ("yes", "no", "on", "off", "true", "false"):
            fix = " (write true or false without quotes)"
    elif isinstance(value, bool):
        got = "true" if value else "false"
    elif isinstance(value, int | float):
        got = excerpt(repr(value), quote=False)
        if err["type"] == "int_type" and isinstance(value, float) and value.is_integer():
            fix = " (write a whole number without a decimal point)"
        elif err["type"] == "bool_type":
            fix = " (write true or false)"
    else:
        got = "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else "another type"
    return f", not {got}{fix}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def first_error(exc: ValidationError) -> str:
    """The most useful validation error of ``exc`` as a phrase (see :func:`describe_error`).

    A misspelt required key shows up twice: as a missing key and as an unknown one. The unknown
    key is what the user wrote, so it is reported, with the missing key it probably means.
    """
    errors = exc.errors()
    missing = {tuple(e["loc"]): e for e in errors if e["type"] == "missing"}
    for err in errors:
        if err["type"] != "extra_forbidden":
            continue
        parent, key = tuple(err["loc"][:-1]), str(err["loc"][-1])
        candidates = [str(loc[-1]) for loc in missing if loc[:-1] == parent]
        close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
        if close:
            return (f"unknown key {excerpt(format_loc(err['loc']))}: a typo of the required key "
                    f"{excerpt(format_loc((*parent, close[0])))}? Rename it")
    return describe_error(errors[0])
