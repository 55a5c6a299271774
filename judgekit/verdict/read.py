"""The verdict of the trust gate: its schema, its consistency, and its match with a store.

``judgekit gate`` writes a verdict (:func:`judgekit.gate.run.run_gate`); analyses, reports and the
demo read one back before they use a judge's ratings. A verdict is only worth what can be
checked about it, so reading one (:func:`validate_verdict`) refuses, with one sentence naming the
file and the key:

* **a wrong shape**: every key of schema version :data:`SCHEMA_VERSION`, of the right type (a
  ``"false"`` string is not a boolean, ``checks`` is a list), and no key it does not define;
* **an inconsistent verdict**: each check is read by the one reader
  (:func:`judgekit.verdict.check.read_check`: its name is what its kind and subject give) and its
  ``state`` is what :func:`judgekit.verdict.check.derive_state` gives from its figure, threshold,
  interval and n against the small-sample floor the recorded policy sets (:func:`min_n_of`) — so
  an ``"inconclusive"`` check edited to ``"pass"`` is refused; the stored certificates
  (``figures``) are what its checks certify;
  ``passed`` is ``state == "pass"``; an inconclusive check, and only one, has a label
  ``budget``; a judge's ``state`` is ``fail`` if any check fails, else ``inconclusive`` if any
  is, else ``pass`` (:func:`combine_states`; the verdict's likewise from its judges) and it
  passes only when that state is ``"pass"``; the thresholds are those of the policy recorded in
  the verdict, every check that policy asks for is there, and the recorded ``policy_hash`` is
  the policy's.

And, given the store it is used with (:func:`match_store`), a verdict must still describe it:

* the **items that carry human or reference ratings** under the rubric (ids and content, the
  content hashes recomputed from the items' text, so a text edited with its hash kept is seen;
  and their metadata, :func:`judgekit.verdict.log.check_metadata`): judging new unlabelled items
  leaves them alone, so it does not void a verdict;
* the **human ratings** (every human and reference label, trial and status under the rubric);
* the **judge's identity** (the spec and parameters of its latest call, see
  :func:`judgekit.gate.run.judge_identity`) and where its ratings came from
  (:func:`judgekit.verdict.log.check_provenance`).

A mismatch is one sentence saying which part changed and that the gate must be run again.

Each check carries its interval ``ci`` (``[low, high]``, or null when the figure has none), its
``state`` (``"pass"``, ``"fail"`` or ``"inconclusive"``) and its ``budget`` (schema version 4).
Only ``"pass"`` is trusted (:func:`judgekit.verdict.trust.require_trusted`). A verdict whose policy gates
under a view of the rubric (``view:``) has the view's id and hash as its ``rubric`` and
``rubric_hash`` and the optional key ``view`` (:mod:`judgekit.rubric.views`), so it never matches
a use of the full rubric.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgekit.core.config import format_loc
from judgekit.core.hashing import digest as digest  # re-exported: its old home
from judgekit.core.hashing import ratings_hash as ratings_hash  # re-exported: its old home
from judgekit.core.paths import MAX_VERDICT_BYTES, read_bounded
from judgekit.core.values import surrogate_problem
from judgekit.errors import JudgekitError, UntrustedJudgeError, excerpt
from judgekit.store.judge_identity import (
    judge_identity as judge_identity,  # re-exported: its old home
)
from judgekit.verdict.certify import certify
from judgekit.verdict.check import (
    CALL_KINDS,
    DERIVED,
    ONCE,
    PROBES,
    Check,
    CheckProblem,
    combine_states,
    not_applied,
    read_check,
)
from judgekit.verdict.policy import Policy
from judgekit.verdict.schema import State as State  # re-exported
from judgekit.verdict.schema import VerdictV4, criteria_digest_problem, view_problem

#: The schema version :func:`judgekit.gate.run.run_gate` writes and :func:`validate_verdict` reads.
#: Version 3 added the third state ``"inconclusive"``, ``state`` per judge and for the verdict,
#: and the label ``budget`` of inconclusive checks and judges; version 4 records each check's kind,
#: rule, metric, subject, interval method and level, unit and floor, and stores the certificates.
SCHEMA_VERSION = 4

AGAIN = "run `judgekit gate POLICY.yaml` again and pass the verdict.json it writes"


# ----------------------------------------------------------------------------- hashes
def store_hashes(store: Any, rubric: Any) -> dict[str, str]:
    """``items_hash`` and ``human_ratings_hash`` of ``store`` under ``rubric`` (a Rubric: its
    current hash), as a verdict records them.

    ``items_hash`` covers the items that carry a human or reference rating (id and content
    hash), not every item: items only a judge rated do not change it. (On a plain store: by SQL.)"""
    from judgekit.store import digests

    if digests.plain_store(store):
        return {"items_hash": digests.items_hash(store, rubric), "human_ratings_hash": digests.human_ratings_hash(store, rubric)}
    human = store.ratings(rubric=rubric, rater_kind=["human", "reference"])
    ids = sorted(human["item_id"].astype(str).unique())
    items = store.items(ids) if ids else None
    pairs = [] if items is None else sorted(zip(items["item_id"].astype(str), items["content_hash"], strict=True))
    return {"items_hash": digest(pairs), "human_ratings_hash": ratings_hash(human)}


class Verdict(dict[str, Any]):
    """A verdict as read by :func:`validate_verdict`: the plain dict, where it came from, and its
    policy as read (:func:`policy_of`)."""

    source: str | None = None
    policy_model: Policy | None = None


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
        VerdictV4.model_validate(data)
    except ValidationError as exc:
        raise JudgekitError(
            f"{where}: {_key_problem(exc.errors()[0])}, so it is not a verdict `judgekit gate` wrote; "
            f"{AGAIN} instead of editing it."
        ) from None
    policy = _consistent(data, where)
    out = Verdict(data)
    out.source = source
    out.policy_model = policy
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
    from judgekit.verdict.numbers import short

    return short(x)


def _why(ch: Check) -> str:
    if ch.small:
        return f"its n {ch.n} is below the policy's min_items {ch.min_n}"
    if ch.figure is None or ch.threshold is None:
        return "it has no figure or no threshold"
    if ch.rule != "point>=" and ch.interval is not None:
        return (f"its interval [{_fmt(ch.interval.low)}, {_fmt(ch.interval.high)}] against the threshold "
                f"{_fmt(ch.threshold)} ({'the whole interval >=' if ch.rule == 'ci>=' else 'the whole interval <='} "
                "needed to pass)")
    side = "below" if ch.figure < ch.threshold else "above" if ch.figure > ch.threshold else "at"
    need = "<=" if ch.rule == "ci<=" else ">="
    return f"its figure {_fmt(ch.figure)} is {side} the threshold {_fmt(ch.threshold)} ({need} needed)"


def _listing(names: list[str], verb: str) -> str:
    return f"{', '.join(names)} {verb}{'s' if len(names) == 1 else ''}"


def min_n_of(kind: str, policy: Policy) -> int | None:
    """The small-sample floor a check of ``kind`` gets under ``policy``: below it the check is
    inconclusive whatever its figure. Overall checks use the policy's ``checks.min_items``,
    per-slice checks their own ``min_items``; class recall has its ``min_support`` (classes
    below it are not checked)."""
    c = policy.checks
    if kind == "per_slice":
        return c.per_slice.min_items if c.per_slice else None
    if kind == "max_abs_bias_slice":
        return c.max_abs_bias.min_items if c.max_abs_bias else None
    if kind == "min_class_recall":
        return None
    if kind in PROBES:
        return getattr(c, kind).min_items if getattr(c, kind) is not None else None
    if kind == "analysis_fidelity":
        return c.analysis_fidelity.min_units if c.analysis_fidelity else None
    if kind == "one_provenance":  # a property of the ratings, not a sample (judgekit.gate.provenance)
        return None
    return c.min_items


def _thresholds(policy: Policy) -> dict[str, Any]:
    """kind → the threshold the policy sets for it (None: the policy has no such check)."""
    c = policy.checks
    return {
        "min_items": c.min_items, "min_value": c.min_value, "min_lower_bound": c.min_lower_bound,
        "max_abstention_rate": c.max_abstention_rate, "max_error_rate": c.max_error_rate,
        "min_class_recall": c.min_class_recall.min if c.min_class_recall else None,
        "per_slice": c.per_slice.min_value if c.per_slice else None,
        "within_human_noise": round(-c.within_human_noise.margin, 6) if c.within_human_noise else None,
        "min_coverage": c.min_coverage,
        "max_abs_bias": c.max_abs_bias.max if c.max_abs_bias else None,
        "max_abs_bias_slice": c.max_abs_bias.max if c.max_abs_bias and c.max_abs_bias.per_slice else None,
        "alt_test": c.alt_test.min_winning_rate if c.alt_test else None,
        **{k: getattr(getattr(c, k), "min" if k == "min_stability" else "max", None) for k in PROBES},
        "max_label_drift": None,  # a probe of `judgekit probe`, not a gate check
        "analysis_fidelity": c.analysis_fidelity.max_abs_diff if c.analysis_fidelity else None,
        "one_provenance": 1.0,  # every judge, whatever the policy (judgekit.gate.provenance)
    }


def _read_checks(j: dict[str, Any], k: int, policy: Policy, where: str) -> list[Check]:
    """The checks of judge entry ``j`` (``judges[k]``), each read by the one reader and held to
    the recorded policy: its threshold, metric and floor, and its state re-derived."""
    c = policy.checks
    wanted = _thresholds(policy)
    seen: set[str] = set()
    out = []
    for i, raw in enumerate(j["checks"]):
        at = f"judges[{k}].checks[{i}] ({raw['name']})"
        try:
            ch = read_check(raw, j["judge"])
        except CheckProblem as exc:
            what = f"judges[{k}].checks[{i}].{exc.key} of {raw['name']}, {exc}" if exc.key else f"{at}: {exc}"
            raise _fail(where, what) from None
        if ch.name in seen:
            raise _fail(where, f"{at} appears twice for judge {j['judge']!r}")
        seen.add(ch.name)
        if wanted[ch.kind] is None:
            raise _fail(where, f"{at} is not a check of the policy it records")
        if ch.kind in ("min_value", "min_lower_bound") and ch.metric != c.metric:
            raise _fail(where, f"{at} is about {ch.metric}, but the policy's metric is {c.metric}")
        thr = wanted[ch.kind]
        if ch.kind == "analysis_fidelity" and c.analysis_fidelity is not None:  # a figure's own margin
            spec = c.analysis_fidelity
            if ch.subject.analysis != spec.analysis or ch.subject.figure not in spec.chosen:
                raise _fail(where, f"{at} is about {ch.subject.analysis}:{ch.subject.figure}, which its policy's "
                                   f"analysis_fidelity ({spec.analysis}: {', '.join(spec.chosen)}) does not check")
            thr = spec.margin(ch.subject.figure or "")
        if ch.threshold != thr:
            raise _fail(where, f"{at} has threshold {_fmt(ch.threshold)}, but the policy it records sets {_fmt(thr)}")
        if ch.min_n != min_n_of(ch.kind, policy):
            raise _fail(where, f"{at} has min_n {ch.min_n}, but the policy it records sets "
                               f"{min_n_of(ch.kind, policy)}")
        if raw["state"] != ch.state:
            raise _fail(where, f"{at} has state {raw['state']!r}, but {_why(ch)}, which makes it {ch.state!r}")
        if raw["passed"] is not (ch.state == "pass"):
            raise _fail(where, f"{at} says passed {str(raw['passed']).lower()}, but {_why(ch)}, which makes it "
                               f"{ch.state!r}")
        if (ch.budget is None) is (ch.state == "inconclusive"):
            raise _fail(where, f"{at} is {ch.state!r} but "
                               + ("has a label budget" if ch.budget is not None else "has no label budget"))
        out.append(ch)
    skipped = not_applied(policy, j["judge"])
    if (j.get("not_applied") or []) != skipped:
        raise _fail(where, f"judges[{k}] ({excerpt(j['judge'], quote=False)}) records a not_applied list its "
                           f"policy does not give ({len(skipped)} checks not applied: "
                           f"{', '.join(s.split(':')[0] for s in skipped) or 'none'})")
    src, groups = j.get("source"), j.get("provenance") or {}
    if src is not None and not j["judge"].startswith(DERIVED) and set(groups) != {src}:
        raise _fail(where, f"judges[{k}] ({excerpt(j['judge'], quote=False)}) names the source {excerpt(src)} "
                           f"certified, but records ratings from {len(groups)} source{'' if len(groups) == 1 else 's'} "
                           f"({', '.join(excerpt(g) for g in sorted(groups)) or 'none'})")
    exempt = CALL_KINDS if j["judge"].startswith(DERIVED) else ()
    if any(ch.kind in exempt for ch in out):
        raise _fail(where, f"judges[{k}] ({j['judge']}) is a derived rater but has a check of its own calls")
    missing = [kd for kd in ONCE if wanted[kd] is not None and kd not in {ch.kind for ch in out} and kd not in exempt]
    if missing:
        label = {"min_value": f"min_{c.metric}", "min_lower_bound": f"min_{c.metric}_lower_bound"}
        raise _fail(where, f"judges[{k}] ({j['judge']}) has no {label.get(missing[0], missing[0])} check, "
                           f"though its policy asks for one")
    return out


def _consistent(v: dict[str, Any], where: str) -> Policy:
    """The recorded policy (the one place a verdict's policy is parsed), after every check of
    the verdict against it (module doc)."""
    if digest(v["policy"]) != v["policy_hash"]:
        raise _fail(where, "policy_hash is not the hash of the policy it records")
    try:
        policy = Policy(**v["policy"])
    except (ValidationError, TypeError):
        raise _fail(where, "the policy it records is not a valid gate policy") from None
    problem = view_problem(v, policy.view) or criteria_digest_problem(
        v, policy.checks.analysis_fidelity.analysis if policy.checks.analysis_fidelity else None)
    if problem is not None:
        raise _fail(where, problem)
    names = [j["judge"] for j in v["judges"]]
    if sorted(names) != sorted(set(policy.judges)) or len(set(names)) != len(names):
        extra = next((n for n in names if n not in policy.judges or names.count(n) > 1), None)
        what = (f"judge {extra!r} is not one the policy names once ({', '.join(policy.judges)})" if extra
                else f"it lists judges {', '.join(names)}, but its policy names {', '.join(policy.judges)}")
        raise _fail(where, what)
    for k, j in enumerate(v["judges"]):
        checks = _read_checks(j, k, policy, where)
        jstate = combine_states([ch.state for ch in checks])
        failing = [ch.name for ch in checks if ch.state == "fail"]
        open_ = [ch.name for ch in checks if ch.state == "inconclusive"]
        why = (_listing(failing, "fail") if failing
               else f"{', '.join(open_)} {'is' if len(open_) == 1 else 'are'} inconclusive" if open_
               else "every check passes")
        if j["passed"] is not (jstate == "pass"):
            raise _fail(where, f"judges[{k}] ({j['judge']}) says passed {str(j['passed']).lower()}, but {why}")
        if j["state"] != jstate:
            raise _fail(where, f"judges[{k}] ({j['judge']}) has state {j['state']!r}, but {why}, which makes it "
                               f"{jstate!r}")
        if (j["budget"] is None) is (jstate == "inconclusive"):
            raise _fail(where, f"judges[{k}] ({j['judge']}) is {jstate!r} but "
                               + ("has a label budget" if j["budget"] is not None else "has no label budget"))
        if j.get("figures") != (certify(checks, policy) or None):  # stored once by the gate: never believed
            raise _fail(where, f"judges[{k}] ({j['judge']}) records figures its checks do not certify")
    vstate = combine_states([j["state"] for j in v["judges"]])
    if v["passed"] is not (vstate == "pass"):
        bad = next((j["judge"] for j in v["judges"] if not j["passed"]), "")
        raise _fail(where, f"'passed' is {str(v['passed']).lower()} but "
                           + (f"judge {bad!r} {'fails' if vstate == 'fail' else 'is inconclusive'}" if bad
                              else "every judge passes"))
    if v["state"] != vstate:
        raise _fail(where, f"'state' is {v['state']!r} but its judges make it {vstate!r}")
    return policy


def policy_of(verdict: dict[str, Any]) -> Policy:
    """The typed policy of a verdict: the one :func:`validate_verdict` parsed when it read it,
    else (a verdict just made, not read) parsed from its ``policy``."""
    held = getattr(verdict, "policy_model", None)
    return held if isinstance(held, Policy) else Policy(**verdict["policy"])


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
        text = read_bounded(p, MAX_VERDICT_BYTES, "Verdict", fix=how).decode("utf-8")
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
def match_store(verdict: Verdict, store: Any, rubric: Any, *, judge: str | None = None, codes: Any = None) -> None:
    """Raise :class:`UntrustedJudgeError` unless ``verdict`` (checked, about ``rubric``) still
    describes ``store``: the items with human or reference ratings, the human ratings, and
    (``judge`` given) that judge's identity. The rubric itself is compared by the caller.
    ``codes``: the ratings already read, hashed (:func:`judgekit.verdict.hashes.current_hashes`)."""
    from judgekit.verdict.hashes import (
        current_hashes,  # (the same values, from one read when it can)
    )

    where, fast = _where(getattr(verdict, "source", None)), current_hashes(store, rubric, judge, codes=codes)
    now = fast[0] if fast else store_hashes(store, rubric)
    place = f"under {rubric.id} in {store.path}"
    if now["items_hash"] != verdict["items_hash"]:
        raise UntrustedJudgeError(
            f"{where}: the items with human or reference ratings {place} changed since the verdict "
            f"(an item was added, removed or its content edited, or the verdict is about another "
            f"store); {AGAIN}."
        )
    from judgekit.store.provenance import stale_content_hash

    stale = stale_content_hash(store, rubric)
    if stale is not None:
        raise UntrustedJudgeError(
            f"{where}: the text of item {stale!r} {place} does not match its content_hash (its "
            f"prompt, messages or response was edited by another tool with the hash kept); restore "
            f"the item's text, or import it anew, and {AGAIN}."
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
    from judgekit.verdict.log import check_against_store

    check_against_store(verdict, store, rubric, judge=judge, where=where, judge_hash=fast[1] if fast else None)


def finite(x: Any) -> float | None:
    """``x`` as a float rounded to 6 places, or None when missing or not finite."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, 6)
