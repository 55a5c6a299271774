"""The verdict of the trust gate: its schema, its consistency, and its match with a store.

``judgekit gate`` writes a verdict (:func:`judgekit.gate.run_gate`); analyses, reports and the
demo read one back before they use a judge's ratings. A verdict is only worth what can be
checked about it, so reading one (:func:`validate_verdict`) refuses, with one sentence naming the
file and the key:

* **a wrong shape**: every key of schema version :data:`SCHEMA_VERSION`, of the right type (a
  ``"false"`` string is not a boolean, ``checks`` is a list), and no key it does not define;
* **an inconsistent verdict**: each check's ``state`` is what its figure against its threshold
  gives (``min_*``, per-slice and human-noise checks: figure >= threshold; ``max_*`` checks:
  figure <= threshold; no figure or no threshold: fail); ``passed`` is ``state == "pass"``; a
  judge passes only when every check's state is ``"pass"``; the verdict passes only when every
  judge does; the thresholds are those of the policy recorded in the verdict, every check that
  policy asks for is there, and the recorded ``policy_hash`` is the policy's.

And, given the store it is used with (:func:`match_store`), a verdict must still describe it:

* the **items that carry human or reference ratings** under the rubric (ids and content):
  judging new unlabelled items leaves them alone, so it does not void a verdict;
* the **human ratings** (every human and reference label, trial and status under the rubric);
* the **judge's identity** (the spec and parameters of its latest call, see
  :func:`judgekit.gate.judge_identity`).

A mismatch is one sentence saying which part changed and that the gate must be run again.

Each check carries its interval ``ci`` (``[low, high]``, or null when the figure has none) and its
``state``. The state is ``"pass"`` or ``"fail"`` today; the trust issue's third state
(``"inconclusive"``) extends :data:`State` and :func:`derive_state` without changing the rule that
a judge passes only when every check's state is ``"pass"``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgekit.calls import latest_parameters
from judgekit.config import format_loc
from judgekit.errors import JudgekitError, UntrustedJudgeError
from judgekit.policy import Policy
from judgekit.values import surrogate_problem

#: The schema version :func:`judgekit.gate.run_gate` writes and :func:`validate_verdict` reads.
SCHEMA_VERSION = 2

#: A check's state. The trust issue (#10) adds "inconclusive" here and in :func:`derive_state`.
State = Literal["pass", "fail"]

AGAIN = "run `judgekit gate POLICY.yaml` again and pass the verdict.json it writes"


# ----------------------------------------------------------------------------- hashes
def digest(obj: Any) -> str:
    """A short stable hash of JSON-able data (keys sorted)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def ratings_hash(ratings: pd.DataFrame) -> str:
    """Order-independent hash of rating rows (item, rater, trial, label, status)."""
    if ratings.empty:
        return digest([])
    cols = ["item_id", "rater_id", "trial", "label", "status"]
    rows = ratings[cols].astype(str).sort_values(cols).to_numpy().tolist()
    return digest(rows)


def store_hashes(store: Any, rubric: Any) -> dict[str, str]:
    """``items_hash`` and ``human_ratings_hash`` of ``store`` under ``rubric`` (a Rubric: its
    current hash), as a verdict records them.

    ``items_hash`` covers the items that carry a human or reference rating (id and content
    hash), not every item: items only a judge rated do not change it.
    """
    human = store.ratings(rubric=rubric, rater_kind=["human", "reference"])
    ids = sorted(human["item_id"].astype(str).unique())
    items = store.items(ids) if ids else None
    pairs = [] if items is None else sorted(zip(items["item_id"].astype(str), items["content_hash"], strict=True))
    return {"items_hash": digest(pairs), "human_ratings_hash": ratings_hash(human)}


# ----------------------------------------------------------------------------- checks
_METRICS = "kappa|weighted_kappa|alpha|ac1|percent_agreement"
#: check name pattern → (kind, direction); the direction is the rule, never read from the file.
_KINDS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"min_items"), "min_items", ">="),
    (re.compile(rf"min_({_METRICS})_lower_bound"), "min_lower_bound", ">="),
    (re.compile(rf"min_({_METRICS})"), "min_value", ">="),
    (re.compile(r"max_abstention_rate"), "max_abstention_rate", "<="),
    (re.compile(r"max_error_rate"), "max_error_rate", "<="),
    (re.compile(r"min_recall\[(.+)\]", re.DOTALL), "min_class_recall", ">="),
    (re.compile(r"per_slice\[(.+)\]", re.DOTALL), "per_slice", ">="),
    (re.compile(r"within_human_noise"), "within_human_noise", ">="),
]
#: kinds a policy asks for once per judge (class recall and slices depend on the data)
_ONCE = ("min_items", "min_value", "min_lower_bound", "max_abstention_rate", "max_error_rate",
         "within_human_noise")


def check_kind(name: str) -> tuple[str, str, str | None] | None:
    """``(kind, direction, metric)`` of a check name as :func:`judgekit.gate.evaluate` makes
    them, or None for a name the gate never writes."""
    for pattern, kind, direction in _KINDS:
        m = pattern.fullmatch(name)
        if m:
            metric = m.group(1) if kind in ("min_value", "min_lower_bound") else None
            return kind, direction, metric
    return None


def derive_state(name: str, figure: float | None, threshold: float | None) -> State:
    """The state a check's figure against its threshold gives: ``min_*`` (and per-slice,
    human-noise) checks need figure >= threshold, ``max_*`` checks figure <= threshold; a check
    without a figure or a threshold fails."""
    kind = check_kind(name)
    if kind is None:
        raise ValueError(f"unknown check {name!r}")
    if figure is None or threshold is None:
        return "fail"
    ok = figure >= threshold if kind[1] == ">=" else figure <= threshold
    return "pass" if ok else "fail"


def make_check(name: str, figure: Any, threshold: Any, n: int | None, detail: str,
               ci: Sequence[float | None] | None = None) -> dict[str, Any]:
    """One check of a verdict: its state follows from figure vs threshold (:func:`derive_state`)."""
    state = derive_state(name, figure, threshold)
    interval = None
    if ci is not None and ci[0] is not None and ci[1] is not None:
        interval = [float(ci[0]), float(ci[1])]
    return {"name": name, "state": state, "passed": state == "pass", "figure": figure,
            "threshold": threshold, "ci": interval, "n": n, "detail": detail}


# ----------------------------------------------------------------------------- schema
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Number = Annotated[float, Field(allow_inf_nan=False)]


class CheckV2(_Strict):
    name: str = Field(min_length=1)
    state: State
    passed: bool
    figure: Number | None
    threshold: Number | None
    ci: Annotated[list[Number], Field(min_length=2, max_length=2)] | None
    n: Annotated[int, Field(ge=0)] | None
    detail: str


class JudgeV2(_Strict):
    judge: str = Field(min_length=1)
    passed: bool
    checks: list[CheckV2]
    spec: str | None
    params: dict[str, Any] | None
    judge_hash: str = Field(min_length=1)


class VerdictV2(_Strict):
    schema_version: Literal[2]
    judgekit_version: str
    created_at: str
    policy: dict[str, Any]
    policy_hash: str
    rubric: str
    rubric_hash: str
    reference: str
    items_hash: str
    human_ratings_hash: str
    passed: bool
    judges: list[JudgeV2] = Field(min_length=1)


class Verdict(dict[str, Any]):
    """A verdict as read by :func:`validate_verdict`: the plain dict, and where it came from."""

    source: str | None = None


def _where(source: str | None) -> str:
    return f"Verdict {source}" if source else "The verdict"


def validate_verdict(data: Any, source: str | None = None) -> Verdict:
    """``data`` (parsed verdict.json) checked for shape and consistency (module doc); every
    problem is one sentence naming ``source`` (the file) and the key. Returns it unchanged."""
    where = _where(source)
    if not isinstance(data, dict) or not isinstance(data.get("judges"), list):
        raise JudgekitError(
            f"{where} has no 'judges' list; it is not a judgekit verdict (make one with "
            "`judgekit gate POLICY.yaml`)."
        )
    for k, j in enumerate(data["judges"]):
        if not isinstance(j, dict) or "judge" not in j:
            raise JudgekitError(f"{where}: judges[{k}] has no 'judge' key; regenerate it with `judgekit gate`.")
    version = data.get("schema_version")
    if "schema_version" not in data:
        raise JudgekitError(
            f"{where} has no schema_version: it was written by an older judgekit or by hand; {AGAIN}."
        )
    if type(version) is not int:
        raise JudgekitError(f"{where}: schema_version must be the integer {SCHEMA_VERSION}, not {version!r}; {AGAIN}.")
    if version != SCHEMA_VERSION:
        raise JudgekitError(
            f"{where}: schema_version {version} is not one this judgekit reads (it reads "
            f"{SCHEMA_VERSION}); {AGAIN}."
        )
    try:
        VerdictV2.model_validate(data)
    except ValidationError as exc:
        raise JudgekitError(
            f"{where}: {_key_problem(exc.errors()[0])}, so it is not a verdict `judgekit gate` wrote; "
            f"{AGAIN} instead of editing it."
        ) from None
    _consistent(data, where)
    out = Verdict(data)
    out.source = source
    return out


_MUST = {"bool_type": "must be true or false", "int_type": "must be an integer", "float_type": "must be a number",
         "finite_number": "must be a finite number", "list_type": "must be a list", "string_type": "must be a string",
         "dict_type": "must be an object", "model_type": "must be an object"}


def _key_problem(err: Any) -> str:
    """One pydantic error of a verdict as a phrase naming the key (values quoted short)."""
    key = format_loc(err["loc"])
    if err["type"] == "extra_forbidden":
        return f"{key!r} is not a key of a schema-version-{SCHEMA_VERSION} verdict"
    if err["type"] == "missing":
        return f"the key {key!r} is missing"
    shown = repr(err.get("input"))
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    must = _MUST.get(err["type"]) or str(err["msg"]).removeprefix("Value error, ").lower()
    return f"{key} {must}, not {shown}"


def _fail(where: str, what: str) -> UntrustedJudgeError:
    return UntrustedJudgeError(f"{where}: {what}; this is not what `judgekit gate` wrote, {AGAIN}.")


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _why(ch: dict[str, Any], direction: str) -> str:
    if ch["figure"] is None or ch["threshold"] is None:
        return "it has no figure or no threshold"
    side = "below" if ch["figure"] < ch["threshold"] else "above" if ch["figure"] > ch["threshold"] else "at"
    return f"its figure {_fmt(ch['figure'])} is {side} the threshold {_fmt(ch['threshold'])} ({direction} needed)"


def _consistent(v: dict[str, Any], where: str) -> None:

    if digest(v["policy"]) != v["policy_hash"]:
        raise _fail(where, "policy_hash is not the hash of the policy it records")
    try:
        policy = Policy(**v["policy"])
    except (ValidationError, TypeError):
        raise _fail(where, "the policy it records is not a valid gate policy") from None
    c = policy.checks
    wanted: dict[str, Any] = {
        "min_items": c.min_items, "min_value": c.min_value, "min_lower_bound": c.min_lower_bound,
        "max_abstention_rate": c.max_abstention_rate, "max_error_rate": c.max_error_rate,
        "min_class_recall": c.min_class_recall.min if c.min_class_recall else None,
        "per_slice": c.per_slice.min_value if c.per_slice else None,
        "within_human_noise": c.within_human_noise,
    }
    names = [j["judge"] for j in v["judges"]]
    if sorted(names) != sorted(set(policy.judges)) or len(set(names)) != len(names):
        extra = next((n for n in names if n not in policy.judges or names.count(n) > 1), None)
        what = (f"judge {extra!r} is not one the policy names once ({', '.join(policy.judges)})" if extra
                else f"it lists judges {', '.join(names)}, but its policy names {', '.join(policy.judges)}")
        raise _fail(where, what)
    for k, j in enumerate(v["judges"]):
        seen: set[str] = set()
        kinds: set[str] = set()
        for i, ch in enumerate(j["checks"]):
            at = f"judges[{k}].checks[{i}] ({ch['name']})"
            kind = check_kind(ch["name"])
            if kind is None:
                raise _fail(where, f"{at} is not a check `judgekit gate` makes")
            name, direction, metric = kind
            if ch["name"] in seen:
                raise _fail(where, f"{at} appears twice for judge {j['judge']!r}")
            seen.add(ch["name"])
            kinds.add(name)
            if wanted[name] is None:
                raise _fail(where, f"{at} is not a check of the policy it records")
            if metric is not None and metric != c.metric:
                raise _fail(where, f"{at} is about {metric}, but the policy's metric is {c.metric}")
            if name != "within_human_noise" and ch["threshold"] != wanted[name]:
                raise _fail(where, f"{at} has threshold {_fmt(ch['threshold'])}, but the policy it records sets "
                                   f"{_fmt(wanted[name])}")
            if ch["ci"] is not None and not ch["ci"][0] <= ch["ci"][1]:
                raise _fail(where, f"judges[{k}].checks[{i}].ci of {ch['name']}, [{_fmt(ch['ci'][0])}, "
                                   f"{_fmt(ch['ci'][1])}], is not an interval (its low end is above its high end)")
            state = derive_state(ch["name"], ch["figure"], ch["threshold"])
            if ch["state"] != state:
                raise _fail(where, f"{at} has state {ch['state']!r}, but {_why(ch, direction)}, which makes it "
                                   f"{state!r}")
            if ch["passed"] is not (state == "pass"):
                raise _fail(where, f"{at} says passed {str(ch['passed']).lower()}, but {_why(ch, direction)}, "
                                   f"which makes it {state!r}")
        missing = [kd for kd in _ONCE if wanted[kd] is not None and kd not in kinds]
        if missing:
            label = {"min_value": f"min_{c.metric}", "min_lower_bound": f"min_{c.metric}_lower_bound"}
            raise _fail(where, f"judges[{k}] ({j['judge']}) has no {label.get(missing[0], missing[0])} check, "
                               f"though its policy asks for one")
        every = all(ch["state"] == "pass" for ch in j["checks"])
        if j["passed"] is not every:
            failing = [ch["name"] for ch in j["checks"] if ch["state"] != "pass"]
            raise _fail(where, f"judges[{k}] ({j['judge']}) says passed {str(j['passed']).lower()}, but "
                               + (f"{', '.join(failing)} fail{'s' if len(failing) == 1 else ''}" if failing
                                  else "every check passes"))
    every = all(j["passed"] for j in v["judges"])
    if v["passed"] is not every:
        bad = next((j["judge"] for j in v["judges"] if not j["passed"]), "")
        raise _fail(where, f"'passed' is {str(v['passed']).lower()} but "
                           + (f"judge {bad!r} fails" if bad else "every judge passes"))


# ----------------------------------------------------------------------------- reading
class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, val in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = val
    return out


def read_verdict(path: str | Path) -> Verdict:
    """Read and check a ``verdict.json`` (one sentence naming the file for every problem)."""
    p = Path(path)
    how = "pass the verdict.json that `judgekit gate` wrote"
    if not p.exists():
        raise UntrustedJudgeError(
            f"Verdict {p}: no such file; {how} (run `judgekit gate POLICY.yaml --out DIR` to get one)."
        )
    if p.is_dir():
        raise JudgekitError(f"Verdict {p} is a folder; pass the verdict.json file inside it.")
    try:
        text = p.read_text(encoding="utf-8")
        data = json.loads(text, object_pairs_hook=_no_duplicates)
        if (surrogate := surrogate_problem(data, text)) is not None:
            raise JudgekitError(f"Verdict {p}: {surrogate}; {how}.")
    except _DuplicateKey as exc:
        shown = exc.key if len(exc.key) <= 40 else exc.key[:37] + "..."
        raise JudgekitError(
            f"Verdict {p}: the key {shown!r} appears twice in one object (JSON keeps only the last), "
            f"so it is not a verdict `judgekit gate` wrote; {AGAIN}."
        ) from None
    except UnicodeDecodeError:
        raise JudgekitError(f"Verdict {p} is not UTF-8 text; {how}.") from None
    except json.JSONDecodeError as exc:
        raise JudgekitError(f"Verdict {p}: invalid JSON at line {exc.lineno}; {how}.") from None
    except RecursionError:
        raise JudgekitError(f"Verdict {p} is nested too deeply to be a verdict; {how}.") from None
    return validate_verdict(data, str(p))


def load_verdict(verdict: dict[str, Any] | str | Path) -> Verdict:
    """A verdict, checked: given as a dict (from ``run_gate`` or ``json.load``) or read from the
    verdict.json of ``judgekit gate``."""
    if isinstance(verdict, dict):
        return validate_verdict(verdict, getattr(verdict, "source", None))
    return read_verdict(verdict)


# ----------------------------------------------------------------------------- the store
def match_store(verdict: Verdict, store: Any, rubric: Any, *, judge: str | None = None) -> None:
    """Raise :class:`UntrustedJudgeError` unless ``verdict`` (checked, about ``rubric``) still
    describes ``store``: the items with human or reference ratings, the human ratings, and
    (``judge`` given) that judge's identity. The rubric itself is compared by the caller."""
    where = _where(getattr(verdict, "source", None))
    now = store_hashes(store, rubric)
    place = f"under {rubric.id} in {store.path}"
    if now["items_hash"] != verdict["items_hash"]:
        raise UntrustedJudgeError(
            f"{where}: the items with human or reference ratings {place} changed since the verdict "
            f"(an item was added, removed or its content edited, or the verdict is about another "
            f"store); {AGAIN}."
        )
    if now["human_ratings_hash"] != verdict["human_ratings_hash"]:
        raise UntrustedJudgeError(
            f"{where}: the human ratings {place} changed since the verdict (a label was added, edited "
            f"or removed, or the verdict is about another store); {AGAIN}."
        )
    if judge is not None:

        entry = next(j for j in verdict["judges"] if j["judge"] == judge)
        if judge_identity(store, judge, rubric)["judge_hash"] != entry["judge_hash"]:
            raise UntrustedJudgeError(
                f"{where}: judge {judge!r} changed since the verdict (its spec or parameters in "
                f"{store.path} differ); {AGAIN}."
            )


def finite(x: Any) -> float | None:
    """``x`` as a float rounded to 6 places, or None when missing or not finite."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, 6)


def judge_identity(store: Any, judge: str, rubric: Any = None,
                   rubric_hash: str | None = None) -> dict[str, Any]:
    """What identifies a judge: its rater id, and for panel judges the spec and parameters of
    its latest call under ``rubric`` (any rubric when None; a Rubric also fixes the hash)."""
    ident: dict[str, Any] = {"judge": judge, "spec": None, "params": None}
    rubric_id: str | None = None
    if rubric is not None:
        rubric_id = str(getattr(rubric, "id", rubric))
        rubric_hash = getattr(rubric, "hash", rubric_hash)
    try:
        latest = latest_parameters(store, judge, rubric=rubric_id, rubric_hash=rubric_hash)
    except Exception:  # an old store without a calls table
        latest = None
    if latest:
        ident["spec"], ident["params"] = latest.spec, latest.params
    ident["judge_hash"] = digest([judge, ident["spec"], ident["params"]])
    return ident
