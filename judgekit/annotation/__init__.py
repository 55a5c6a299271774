"""People: the labelling designs (which items to label: :func:`sample_design`, :func:`draw_sample`)
and the Label Studio bridge (:mod:`judgekit.annotation.labelstudio`). See docs/labelstudio.md.
"""

from judgekit.core.lazy import lazy_exports

# imported from their modules on first use (`import judgekit.<package>` stays cheap)
_LAZY = {
    "SampleSpec": "sampling",
    "SampleSummary": "sampling",
    "draw_sample": "sampling",
    "load_spec": "sampling",
    "record_sample": "sampling",
    "sample_design": "sampling",
    "sample_items": "sampling",
    "spec_from_dict": "sampling",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
