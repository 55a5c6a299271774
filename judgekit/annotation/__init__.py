"""Annotation bridges: collect human ratings from annotation tools (Label Studio)."""
