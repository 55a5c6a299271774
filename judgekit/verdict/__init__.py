"""The verdict: the contract between the gate that writes it and the analyses that read it —
its schema, its checks' rule, the policy it records, reading it strictly, matching it with a
store, and the guard :func:`require_trusted`.
"""

from judgekit.core.lazy import lazy_exports

# the public names of the module this package replaced, imported from where they live on first use
_LAZY = {
    "digest": "judgekit.core.hashing",
    "judge_identity": "judgekit.store.judge_identity",
    "ratings_hash": "judgekit.core.hashing",
    "AGAIN": "read",
    "Budget": "check",
    "Check": "check",
    "Interval": "check",
    "Subject": "check",
    "Policy": "policy",
    "SCHEMA_VERSION": "read",
    "State": "schema",
    "Verdict": "read",
    "VerdictV4": "schema",
    "check_json": "check",
    "combine_states": "check",
    "derive_state": "check",
    "finite": "read",
    "load_verdict": "read",
    "match_store": "read",
    "min_n_of": "read",
    "policy_of": "read",
    "read_check": "check",
    "read_verdict": "read",
    "store_hashes": "read",
    "validate_verdict": "read",
    "view_problem": "schema",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
