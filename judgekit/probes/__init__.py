"""Bias probes for judges on absolute rubrics: does the label depend on things that should not matter?

Offline probes on ratings already in the store (:mod:`~judgekit.probes.covariate`,
:mod:`~judgekit.probes.self_preference`, :mod:`~judgekit.probes.stability`,
:mod:`~judgekit.probes.marginal`), perturbation probes that ask the judges again
(:mod:`~judgekit.probes.perturb`), their null bands and Holm families
(:mod:`~judgekit.probes.bands`), the probe file (:mod:`~judgekit.probes.probefile`) and running
them over a store (:mod:`~judgekit.probes.run`). See docs/probes.md.
"""
