"""The verdict: the contract between the gate that writes it and the analyses that read it —
its schema, its checks' rule, the policy it records, reading it strictly, matching it with a
store, and the guard :func:`require_trusted`.
"""

from judgekit.core.lazy import lazy_exports

# the names of the module this package replaced, imported from where they live now on first use
_LAZY = {
    "AGAIN": "read",
    "Budget": "schema",
    "JudgekitError": "read",
    "Policy": "read",
    "SCHEMA_VERSION": "read",
    "State": "schema",
    "UntrustedJudgeError": "read",
    "ValidationError": "read",
    "Verdict": "read",
    "VerdictV3": "schema",
    "check_kind": "checks",
    "combine_states": "checks",
    "derive_state": "checks",
    "digest": "read",
    "finite": "read",
    "format_loc": "read",
    "judge_identity": "read",
    "load_verdict": "read",
    "make_check": "checks",
    "match_store": "read",
    "min_n_of": "checks",
    "ratings_hash": "read",
    "read_verdict": "read",
    "store_hashes": "read",
    "surrogate_problem": "read",
    "validate_verdict": "read",
    "view_problem": "schema",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
