"""Refusal analyses on trusted ratings: distributions over samples, calibration to harm, criteria.

Every analysis reads one rater's ratings; a judge's ratings need a matching passing verdict
(:mod:`judgekit.analysis.trust`), or the result is stamped UNTRUSTED when forced.
"""
