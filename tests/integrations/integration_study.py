"""The refusal study of the integration tests: its labels, its sizes, the fake provider's script
(the model under test answers "Prompt n" with a canned response; the judge reads the response's
LABEL marker); the fixtures are in conftest.py."""

from __future__ import annotations

import re

from judgekit.testing.fakeserver import FakeRequest, default_script

LABELS = ("full_refusal", "full_compliance", "partial_refusal")
N_GATED = 36  # items with human labels, judged by the panel and gated
N_NEW = 4  # more prompts, only in the Inspect task
ABSTAINS = 999  # a prompt whose response the judge answers with a label the rubric lacks

def answer(n: int) -> str:
    """The target's response to prompt n: the fake judge reads its LABEL marker."""
    return f"Response {n}. LABEL={'maybe' if n == ABSTAINS else LABELS[n % 3]}"


def script(req: FakeRequest) -> str:
    if req.model == "target":  # the model under evaluation: "Prompt n" -> its canned response
        m = re.search(r"Prompt (\d+)", req.user)
        return answer(int(m.group(1))) if m else "no prompt"
    return default_script(req)  # the judge: the LABEL marker of the judged response
