"""Selective judging with a guarantee ("Trust or Escalate", Jung, Brahman & Choi, ICLR 2025):
trust each judge of a cascade (cheap -> strong) where its confidence reaches a threshold calibrated
on human-labelled items, escalate the rest to people.

The policy file (:mod:`~judgekit.selective.policy`), the judgments read from the store
(:mod:`~judgekit.selective.judgments`), calibration (:mod:`~judgekit.selective.calibrate`), the
calibration file (:mod:`~judgekit.selective.calibrate`), applying it to new items and recording who
labels what (:mod:`~judgekit.selective.apply`) and the XSTest demo step
(:mod:`~judgekit.selective.demo`). See docs/selective.md.
"""

from judgekit.core.lazy import lazy_exports

# imported from their modules on first use (`import judgekit.<package>` stays cheap)
_LAZY = {
    "SelectiveCalibration": "calibrate",
    "SelectivePolicy": "policy",
    "apply_policy": "apply",
    "calibrate_policy": "calibrate",
    "cascade_costs": "calibrate",
    "load_selective_policy": "policy",
    "read_calibration": "calibrate",
    "read_judgments": "judgments",
    "write_calibration": "calibrate",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
