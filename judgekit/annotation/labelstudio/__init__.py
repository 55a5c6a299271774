"""Label Studio bridge: rubric → labeling config, push items as tasks, pull annotations back.

* :func:`label_config` renders one labeling interface from one or several rubrics (the same
  YAML files the judges use): the conversation turn by turn, the response, one choice control per
  rubric (codes in rubric order, descriptions shown, examples as hints) and an optional comment.
* :func:`push` and :func:`pull` move items out as tasks and annotations back as human ratings
  (:mod:`.sync` says how: blind tasks, stable rater ids, one transaction, idempotent).

The server address and token come from arguments or the environment (``LABEL_STUDIO_URL``,
``LABEL_STUDIO_API_KEY``); neither is written to the store or printed, and every message is
redacted (:mod:`.redact`) in case the server echoes the token or a provider key back. The HTTP calls go through
the official ``label-studio-sdk`` (installed with the ``labelstudio`` extra), imported on the
first call.

Modules: :mod:`.config` (labeling config, rubric record), :mod:`.tasks` (task payloads),
:mod:`.client` (the API over the SDK), :mod:`.exports` (annotations from tasks and export files),
:mod:`.sync` (push and pull), :mod:`.values` (single values as Label Studio gives them),
:mod:`.redact` (secrets kept out of messages), :mod:`.annotations` (annotations -> ratings and
items).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgekit.core.lazy import lazy_exports

if TYPE_CHECKING:
    from judgekit.annotation.labelstudio.annotations import (
        PullSummary,
        annotations_to_ratings,
        parse_annotator_map,
    )
    from judgekit.annotation.labelstudio.client import ENV_TOKEN, ENV_URL, LabelStudioClient
    from judgekit.annotation.labelstudio.config import (
        COMMENT_CONTROL,
        check_rubrics,
        label_config,
        load_rubrics,
        parse_marker,
        rubric_marker,
    )
    from judgekit.annotation.labelstudio.exports import (
        Annotation,
        from_flat_rows,
        from_full_tasks,
        read_export,
    )
    from judgekit.annotation.labelstudio.sync import PushOptions, PushSummary, pull, push
    from judgekit.annotation.labelstudio.tasks import task_data
    from judgekit.annotation.labelstudio.values import rater_name

# Imported on first use: `judgekit labelstudio config` needs the config module only, not
# pandas nor the SDK client.
_LAZY = {
    "PullSummary": "annotations",
    "annotations_to_ratings": "annotations",
    "parse_annotator_map": "annotations",
    "ENV_TOKEN": "client",
    "ENV_URL": "client",
    "LabelStudioClient": "client",
    "COMMENT_CONTROL": "config",
    "check_rubrics": "config",
    "label_config": "config",
    "load_rubrics": "config",
    "parse_marker": "config",
    "rubric_marker": "config",
    "Annotation": "exports",
    "from_flat_rows": "exports",
    "from_full_tasks": "exports",
    "read_export": "exports",
    "PushOptions": "sync",
    "PushSummary": "sync",
    "pull": "sync",
    "push": "sync",
    "task_data": "tasks",
    "rater_name": "values",
}

__all__ = [
    "Annotation",
    "COMMENT_CONTROL",
    "ENV_TOKEN",
    "ENV_URL",
    "LabelStudioClient",
    "PullSummary",
    "PushOptions",
    "PushSummary",
    "annotations_to_ratings",
    "check_rubrics",
    "from_flat_rows",
    "from_full_tasks",
    "label_config",
    "load_rubrics",
    "parse_annotator_map",
    "parse_marker",
    "pull",
    "push",
    "rater_name",
    "read_export",
    "rubric_marker",
    "task_data",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
