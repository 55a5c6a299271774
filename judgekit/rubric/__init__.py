"""Rubrics: a scale as data (the model), its views and vocabulary, and the judge prompt
and answer parsing rendered from it.
"""

from judgekit.core.lazy import lazy_exports

# the public names of the module this package replaced, imported from where they live on first use
_LAZY = {
    "AliasPattern": "vocab",
    "AliasRange": "vocab",
    "JudgeSpec": "model",
    "Label": "model",
    "Level": "model",
    "MAX_TEMPLATE_BYTES": "model",
    "Rubric": "model",
    "View": "vocab",
    "available_rubrics": "model",
    "check_vocab": "vocab",
    "load_rubric": "model",
    "match_pattern": "vocab",
    "match_range": "vocab",
    "rubric_named_in": "model",
    "shipped_dir": "model",
    "shipped_rubric_dir": "model",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
