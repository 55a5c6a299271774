"""Knobs out of their bounds: margins no figure can exceed, an α that leaves no interval, seeds
numpy refuses, ``min_units`` no memory holds — in the policy the gate reads and the plan reads.

Each is refused before any figure is computed: exit 2, one sentence naming the policy file and
the key, nothing written (see :mod:`make_corpus`).
"""

from __future__ import annotations

from corpus.base import Case, Valid, text

#: a fidelity policy the template store passes (distribution figures, by prompt)
FIDELITY = ("rubric: refusal\njudges: [j1]\nreference: final\nchecks:\n  min_items: 10\n  min_value: 0.5\n"
            "  analysis_fidelity:\n    analysis: distribution\n    max_abs_diff: 0.5\n    min_units: 2\n"
            "    prompt_column: prompt_id\nn_resamples: 100\n")
GATE_ARGS = ("gate", "{case}/policy.yaml", "--store", "{store}", "--out", "{out}")
PLAN_ARGS = ("plan", "{case}/policy.yaml", "--store", "{store}", "--out", "{out}/plan.json")
NO_VERDICT = ("{out}/verdict.json",)


def _fidelity(key: str, value: str) -> str:
    """The fidelity policy with ``analysis_fidelity.key`` set to ``value``."""
    return FIDELITY.replace("    min_units: 2\n", f"    min_units: 2\n    {key}: {value}\n") \
        if key != "min_units" else FIDELITY.replace("    min_units: 2\n", f"    min_units: {value}\n")


def knob_cases(cid: str, content: str, expect: tuple[str, ...]) -> list[Case]:
    """The same broken policy read by the gate and by the plan."""
    return [Case(id=f"knob-{cmd}-{cid}", kind="policy", files={"policy.yaml": text(content)}, args=args,
                 expect=("Policy file", *expect), no_output=(NO_VERDICT if cmd == "gate" else ("{out}/plan.json",)))
            for cmd, args in (("gate", GATE_ARGS), ("plan", PLAN_ARGS))]


CASES: list[Case] = [
    *knob_cases("max-abs-diff-past-range", FIDELITY.replace("max_abs_diff: 0.5", "max_abs_diff: 2.5"),
                ("max_abs_diff",)),
    *knob_cases("max-abs-diff-whole-range", FIDELITY.replace("max_abs_diff: 0.5", "max_abs_diff: 1"),
                ("max_abs_diff",)),
    *knob_cases("margin-past-range", _fidelity("margins", "{refusal_rate: 2.5}"), ("margins.refusal_rate",)),
    *knob_cases("alpha-tiny", _fidelity("alpha", "1.0e-300"), ("alpha",)),
    *knob_cases("seed-negative", FIDELITY + "seed: -1\n", ("seed",)),
    *knob_cases("seed-past-uint32", FIDELITY + "seed: 4294967296\n", ("seed",)),
    *knob_cases("min-units-million", _fidelity("min_units", "1000000"), ("min_units",)),
    *knob_cases("min-units-2-63", _fidelity("min_units", str(2**63)), ("min_units",)),
]

VALID: list[Valid] = [
    Valid("knob-gate", {"policy.yaml": text(FIDELITY)}, GATE_ARGS),
    Valid("knob-plan", {"policy.yaml": text(FIDELITY)}, PLAN_ARGS),
]
