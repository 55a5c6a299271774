"""Foundations every layer uses: lazy exports, hashing, YAML config models, the safe console,
values as written in a cell, and atomic file writes. Imports nothing of judgekit but errors.
"""

from judgekit.core.lazy import lazy_exports

# imported from their modules on first use (`import judgekit.<package>` stays cheap)
_LAZY = {
    "ConfigModel": "config",
    "clean": "console",
    "digest": "hashing",
    "echo": "console",
    "lazy_exports": "lazy",
    "make_console": "console",
    "read_yaml_mapping": "config",
    "regular_input": "paths",
    "regular_output": "paths",
    "write_text_atomic": "atomic",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
