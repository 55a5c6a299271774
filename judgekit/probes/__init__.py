"""Bias probes for judges on absolute rubrics: does the label depend on things that should not matter?

Offline probes on ratings already in the store (:mod:`~judgekit.probes.covariate`,
:mod:`~judgekit.probes.covariate`, :mod:`~judgekit.probes.stability`,
:mod:`~judgekit.probes.marginal`), perturbation probes that ask the judges again
(:mod:`~judgekit.probes.perturb`), their null bands and Holm families
(:mod:`~judgekit.probes.bands`), the probe file (:mod:`~judgekit.probes.probefile`) and running
them over a store (:func:`run_probes`). See docs/probes.md.
"""

from judgekit.core.lazy import lazy_exports

# imported from their modules on first use (`import judgekit.<package>` stays cheap)
_LAZY = {
    "ProbeFile": "probefile",
    "covariate_effect": "covariate",
    "load_probe_file": "probefile",
    "run_probes": "run",
    "stratified_difference": "covariate",
    "stuart_maxwell": "marginal",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
