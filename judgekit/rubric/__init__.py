"""Rubrics: a scale as data (the model), its views and vocabulary, and the judge prompt
and answer parsing rendered from it.
"""

from judgekit.core.lazy import lazy_exports

# the names of the module this package replaced, imported from where they live now on first use
_LAZY = {
    "AliasPattern": "vocab",
    "AliasRange": "vocab",
    "ConfigDict": "model",
    "ConfigModel": "model",
    "Field": "model",
    "JudgeSpec": "model",
    "JudgekitError": "model",
    "Label": "model",
    "Level": "model",
    "MAX_TEMPLATE_BYTES": "model",
    "Rubric": "model",
    "ValidationError": "model",
    "View": "vocab",
    "available_rubrics": "model",
    "cached_property": "model",
    "check_vocab": "vocab",
    "excerpt": "model",
    "field_validator": "model",
    "first_error": "model",
    "load_rubric": "model",
    "match_pattern": "vocab",
    "match_range": "vocab",
    "model_validator": "model",
    "read_yaml_mapping": "model",
    "rubric_named_in": "model",
    "shipped_dir": "model",
    "shipped_rubric_dir": "model",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
