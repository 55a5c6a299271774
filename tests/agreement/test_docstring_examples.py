"""The examples in the public docstrings of judgekit.agreement run and print what they claim."""

from __future__ import annotations

import doctest

import pytest

from judgekit.agreement import alpha, bootstrap, chance, confusion, kappa


@pytest.mark.parametrize("module", [alpha, bootstrap, chance, confusion, kappa])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
