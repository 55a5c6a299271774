"""Kept for the documented import path ``from judgekit.sampling import ...``: the labelling
designs live in :mod:`judgekit.annotation.sampling` (whole conversations in
:mod:`judgekit.annotation.sampling_conversations`)."""

from judgekit.annotation.sampling import (
           SampleSpec,
           SampleSummary,
           draw_sample,
           load_spec,
           record_sample,
           sample_design,
           sample_items,
           sample_names,
           spec_from_dict,
)

__all__ = ["SampleSpec", "SampleSummary", "draw_sample", "load_spec", "record_sample", "sample_design",
           "sample_items", "sample_names", "spec_from_dict"]
