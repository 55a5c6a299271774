"""Each package's public names are listed in ``__all__``, resolve on first use, and are what
``help()`` shows for the package."""

from __future__ import annotations

import importlib
import pydoc

import pytest

PACKAGES = ["judgekit", "judgekit.annotation", "judgekit.annotation.labelstudio", "judgekit.core", "judgekit.io", "judgekit.judges",
            "judgekit.probes", "judgekit.report", "judgekit.rubric", "judgekit.selective",
            "judgekit.store", "judgekit.testing"]


@pytest.mark.parametrize("package", PACKAGES)
def test_help_lists_every_public_name(package: str) -> None:
    mod = importlib.import_module(package)
    text = pydoc.plain(pydoc.render_doc(mod))
    missing = [name for name in mod.__all__ if name not in text]
    assert not missing, f"help({package}) does not show {missing}"


@pytest.mark.parametrize("package", PACKAGES)
def test_dir_lists_the_public_names(package: str) -> None:
    mod = importlib.import_module(package)
    assert set(mod.__all__) <= set(dir(mod))
    assert mod.__all__ == sorted(mod.__all__) or package == "judgekit"
