"""The Label Studio labeling config generated from rubrics, and the rubric record of a project.

One labeling interface rates one or several rubrics (the same YAML files the judges use): the
conversation turn by turn, the response, one choice control per rubric (codes in rubric order,
descriptions shown, examples as hints) and an optional comment. A project created by judgekit
records the rubrics and their hashes in its description (:func:`rubric_marker`), so a later push
or pull knows what the project rates (:func:`parse_marker`).
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from judgekit.errors import JudgekitError
from judgekit.rubric.model import Rubric, load_rubric

#: name of the free-text control in generated configs (its text becomes the rating's rationale).
COMMENT_CONTROL = "comment"
_MARKER = "judgekit-rubrics:"
#: CSS hiding the time range Label Studio's dialogue layout prints beside each turn's role: the
#: task data has no times (a turn is ``{role, content}``), so every turn would read
#: ``00:00:00 - 00:00:00``.
#: Label Studio (1.23) renders it as ``<span class="titleWrapper--HASH"> … <span class="time--HASH">``
#: (CSS-module names: the hash changes between releases, the prefix does not). No ``>``, ``<``,
#: ``&`` or quotes: Label Studio escapes them in a ``<Style>``.
HIDE_TURN_TIME = ".jk-conversation [class^=titleWrapper--] [class^=time--] { display: none; }"


def label_config(rubrics: Sequence[Rubric], *, comment: bool = True) -> str:
    """The Label Studio labeling config (XML) for rating ``rubrics`` in one pass.

    Each rubric becomes a ``<Choices name="<rubric name>">`` control with one ``<Choice>`` per
    label in rubric order (``value`` is the code, the description is shown, examples are the
    hint). The task shows the conversation (``$messages``, turn by turn, without the empty time
    range Label Studio would print beside each turn: :data:`HIDE_TURN_TIME`) and ``$response``.
    """
    rubs = check_rubrics(rubrics)
    out = [
        "<View>",
        "  <Style>.jk-instructions h1, .jk-instructions h2, .jk-instructions h3, .jk-instructions h4,"
        " .jk-instructions h5, .jk-instructions h6 { font-size: 15px; font-weight: normal;"
        " line-height: 1.4; } " + HIDE_TURN_TIME + "</Style>",
        '  <Header value="Conversation" size="4"/>',
        '  <View className="jk-conversation">',
        '    <Paragraphs name="conversation" value="$messages" layout="dialogue"'
        ' nameKey="role" textKey="content"/>',
        "  </View>",
        '  <Header value="Response to rate" size="4"/>',
        '  <View style="border: 1px solid #ccc; padding: 8px; white-space: pre-wrap">',
        '    <Text name="response" value="$response"/>',
        "  </View>",
    ]
    for r in rubs:
        out.append('  <View style="margin-top: 16px">')
        out.append(f"    <Header value={quoteattr(r.title)} size=\"4\"/>")
        instructions = " ".join(r.instructions.split())
        if r.priority_ordered:
            instructions += " When several labels apply, choose the first one listed."
        out.append('    <View className="jk-instructions">')
        out.append(f"      <Header value={quoteattr(instructions)} size=\"6\" underline=\"false\"/>")
        out.append("    </View>")
        out.append(
            f'    <Choices name={quoteattr(r.name)} toName="response" choice="single-radio"'
            ' required="true" showInline="false">'
        )
        for lab in r.labels:
            desc = " ".join(lab.description.split())
            html = f"<b>{escape(lab.code)}</b> — {escape(desc)}"
            attrs = f"value={quoteattr(lab.code)} html={quoteattr(html)}"
            if lab.examples:
                attrs += " hint=" + quoteattr("Example: " + " | ".join(lab.examples))
            out.append(f"      <Choice {attrs}/>")
        out.append("    </Choices>")
        out.append("  </View>")
    if comment:
        out.append(
            f'  <TextArea name="{COMMENT_CONTROL}" toName="response" rows="2" editable="true"'
            ' maxSubmissions="1" placeholder="Optional comment (why this label?)"/>'
        )
    out.append("</View>")
    return "\n".join(out)


def check_rubrics(rubrics: Sequence[Rubric | str]) -> list[Rubric]:
    """Load the rubrics one project rates: at least one, each once, none named like the comment box."""
    rubs = [load_rubric(r) for r in rubrics]
    if not rubs:
        raise JudgekitError("Name at least one rubric with --rubric.")
    names = [r.name for r in rubs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise JudgekitError(f"Rubric {dup[0]!r} is given twice; rate each rubric once per project.")
    if COMMENT_CONTROL in names:
        raise JudgekitError(f"A rubric named {COMMENT_CONTROL!r} clashes with the comment box; rename it.")
    return rubs


def load_rubrics(names: Sequence[str]) -> list[Rubric]:
    """Load several rubrics by name or path."""
    return check_rubrics(list(names))


def rubric_marker(rubrics: Sequence[Rubric]) -> str:
    """The line written into a project's description that records the rubrics and hashes."""
    return f"{_MARKER} " + ", ".join(r.ref for r in rubrics)


def parse_marker(description: str | None) -> list[str]:
    """Rubric refs (``name@version#hash``) recorded in a project description, or ``[]``."""
    for line in (description or "").splitlines():
        if line.strip().startswith(_MARKER):
            return [p.strip() for p in line.split(":", 1)[1].split(",") if p.strip()]
    return []
