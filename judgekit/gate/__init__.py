"""The trust gate: a policy's checks run on the store (agreement, alt-test, probes, analysis
fidelity), their label budgets, and the verdict it writes (:mod:`judgekit.verdict`).
"""

from judgekit.core.lazy import lazy_exports

# the public names of the module this package replaced, imported from where they live on first use
_LAZY = {
    "Policy": "judgekit.verdict.policy",
    "Report": "checks",
    "evaluate": "checks",
    "explain": "run",
    "gate": "api",
    "judge_identity": "judgekit.store.judge_identity",
    "load_policy": "judgekit.verdict.policy",
    "load_verdict": "judgekit.verdict.read",
    "ratings_hash": "judgekit.core.hashing",
    "require_trusted": "judgekit.verdict.trust",
    "run_gate": "run",
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
