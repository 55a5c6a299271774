"""The trust gate: a policy's checks run on the store (agreement, alt-test, probes, analysis
fidelity), their label budgets, and the verdict it writes (:mod:`judgekit.verdict`).
"""

from judgekit.core.lazy import lazy_exports

# the names of the module this package replaced, imported from where they live now on first use
_LAZY = {
    "JudgekitError": "run",
    "Policy": "run",
    "Report": "run",
    "Rubric": "run",
    "SCHEMA_VERSION": "run",
    "Union": "run",
    "UntrustedJudgeError": "run",
    "Verdict": "run",
    "alt_budget": "run",
    "alt_inputs_results": "run",
    "check_kind": "run",
    "combine_states": "run",
    "evaluate": "run",
    "excerpt": "run",
    "explain": "run",
    "finite": "run",
    "judge_budget": "run",
    "judge_identity": "run",
    "judge_ratings_hash": "run",
    "label_budget": "run",
    "load_policy": "run",
    "load_rubric": "run",
    "load_verdict": "run",
    "make_check": "run",
    "match_store": "run",
    "min_n_of": "run",
    "ratings_hash": "run",
    "record_verdict": "run",
    "require_trusted": "judgekit.verdict.trust",
    "rubric_named_in": "run",
    "run_gate": "run",
    "store_hashes": "run",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)


class _CallablePackage(type(__import__("sys"))):  # type: ignore[misc]
    """``judgekit.gate`` is this package and, called, the Python API's :func:`judgekit.gate.api.gate`:
    ``judgekit.gate(store, "policy.yaml")`` works whether or not the package was imported first."""

    def __call__(self, store: object, policy: object) -> object:
        from judgekit.gate.api import gate

        return gate(store, policy)  # type: ignore[arg-type]


__import__("sys").modules[__name__].__class__ = _CallablePackage
