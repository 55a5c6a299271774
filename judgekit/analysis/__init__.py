"""Refusal analyses on trusted ratings: distributions over samples, calibration to harm, criteria.

Every analysis reads one rater's ratings; a judge's ratings need a matching passing verdict
(:mod:`judgekit.analysis.trust`), or the result is stamped UNTRUSTED when forced.

The analyses (:mod:`~judgekit.analysis.distribution`, :mod:`~judgekit.analysis.calibration`,
:mod:`~judgekit.analysis.criteria`) are pure functions over DataFrames returning an
:class:`~judgekit.analysis.result.AnalysisResult`; :mod:`~judgekit.analysis.inputs` reads their
inputs from a store and writes the result's files, :mod:`~judgekit.analysis.render` renders them
and :mod:`~judgekit.analysis.terminal` prints the summary tables.
"""
