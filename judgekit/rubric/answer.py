"""Reading a judge's answer.

:func:`parse_answer` turns a raw completion into ``ok`` + a code, or ``abstain`` + the reason. It
accepts JSON (anywhere in the text; the last object with a ``label`` wins when every label given
agrees — several labels that disagree, in JSON or ``label: X``, are a contradictory answer: an
abstention naming them), a bare code, or prose with an explicit ``label: X``. It removes what the judge copied from the judged texts first (an
echo of the whole fenced item — recognised by its nonce, which is the hash of what it encloses —,
the whole judged text, a quoted passage, a JSON object or a ``label: X`` found verbatim in them),
so a label the judge quotes from the item is never taken for its answer. A marker alone (a lone
``<<<JUDGED-ITEM …>>>`` quoted from the response, or a pair whose content is not the item) removes
nothing: the judge's own words are never cut. When what was removed may have been the judge's own
answer (a ``label: X`` or the whole text it wrote is also text of the item, unquoted) and only a
weaker or different mention is left, the answer is ambiguous; so is prose naming several codes
without an explicit answer: an abstention with the reason, never a guess.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from judgekit.rubric.model import Rubric


def fence_nonce(text: str) -> str:
    """A 12-hex nonce for the fence, from the content it encloses (deterministic, unforgeable)."""
    nonce = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    salt = 0
    while nonce in text:  # astronomically unlikely; guarantees the marker is unique anyway
        salt += 1
        nonce = hashlib.sha256(f"{salt}:{text}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return nonce


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """A parsed judge answer: ``status`` ok (with ``label``) or abstain (with ``reason``)."""

    status: str
    label: str | None
    rationale: str | None
    reason: str | None = None


_EXPLICIT = re.compile(
    r"(?:label|answer|classification|verdict|rating|category)\s*(?:is|:|=)\s*[\"'*`]*\s*"
    r"([A-Za-z][A-Za-z0-9_\- ]{0,40}?)\s*(?:[\"'*`.,;)\n]|$)",
    re.IGNORECASE,
)
#: a JSON key of the answer format, as left in an answer that does not parse
_JSON_KEY = re.compile(r"[\"'](?:label|rationale)[\"']\s*:")
#: a negation just before a mention of a code ("not a", "isn't really", "rather than")
_NEGATED = re.compile(
    r"(?:\bnot|n't|\bnever|\bno|\bneither|\bnor|\brather than|\binstead of)\W+(?:\w+\W+){0,2}$",
    re.IGNORECASE,
)
#: a quoted passage: "...", '...', `...`, “...”, ‘...’ or «...» (one line at most)
_QUOTED = re.compile(r"([\"'`\u201c\u2018\u00ab])([^\n\"`\u201d\u2019\u00bb]{8,}?)[\"'`\u201d\u2019\u00bb]")
_WORD = re.compile(r"[A-Za-z0-9_]")
#: where a sentence ends: a full stop, ? or ! before a blank or the end, or a line break
_SENTENCE_END = re.compile(r"[.?!](?=\s|$)|\n")
#: words that negate or judge a label named just before them ("refusal would be wrong",
#: "compliance was declined", "partial credit is not appropriate")
_DOUBT = re.compile(
    r"(?:\b(?:not|never|no|none|neither|nor|without|rather|instead|but|however|although|though"
    r"|except|wrong|incorrect|inaccurate|inappropriate|mistaken|false|untrue|unlikely|unclear"
    r"|uncertain|unsure|doubtful|questionable|debatable|arguably|hardly|barely|maybe|perhaps"
    r"|possibly|might|could|would|should|if|unless|declined|declines|rejected|rejects|denied"
    r"|denies|withheld|refuses|refusing|avoided|avoids|lacking|lacks|absent|missing|fails"
    r"|failed)\b|n't\b)",
    re.IGNORECASE,
)
_FENCE_OPEN_RE = re.compile(r"<<<JUDGED-ITEM ([0-9a-f]{12})>>>")
#: quotation marks that enclose a passage the judge quotes: opening → closing
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb"}



@dataclass(frozen=True)
class _Removed:
    """What removing the item's copies from an answer left: the text before (``before``), each
    remaining character's position there (``origin``; < 0 a blank put in place of a copy) and
    the codes in copies not in quotation marks (``copied_codes``)."""

    before: str
    origin: list[int]
    copied_codes: set[str]

class AnswerParser:
    """Parses completions for one rubric; build once per rubric (the regexes are compiled here)."""

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric
        # Only the codes themselves count as a mention in prose (``partial_refusal``, also
        # written ``partial refusal``); loose aliases such as "refusal" are too common in prose.
        words = sorted(rubric.codes, key=len, reverse=True)
        alts = "|".join(r"[_\s\-]".join(map(re.escape, w.split("_"))) for w in words)
        self._mention = re.compile(
            r"(?<![A-Za-z0-9_])(" + alts + r")(?![A-Za-z0-9_])", re.IGNORECASE
        )
        # Any name of a label, codes and aliases alike: what must not follow a first-word answer.
        names = sorted({*rubric.codes, *rubric.aliases}, key=len, reverse=True)
        alts = "|".join(r"[_\s\-]+".join(map(re.escape, _norm_name(n).split("_"))) for n in names)
        self._any_name = re.compile(
            r"(?<![A-Za-z0-9_])(" + alts + r")(?![A-Za-z0-9_])", re.IGNORECASE
        )

    def __call__(self, raw: str | None, *, quoted: Iterable[str] = ()) -> ParsedAnswer:
        return self.parse(raw, quoted=quoted)

    def parse(self, raw: str | None, *, quoted: Iterable[str] = ()) -> ParsedAnswer:
        """Parse one completion. ``quoted``: the judged texts (removed before parsing). JSON
        nested too deep for the parser is an abstention, never an exception."""
        try:
            return self._parse(raw, quoted)
        except RecursionError:
            return ParsedAnswer("abstain", None, None, "the answer's JSON is nested too deep to read")

    def _parse(self, raw: str | None, quoted: Iterable[str]) -> ParsedAnswer:
        rubric = self.rubric
        if raw is None or not raw.strip():
            return ParsedAnswer("abstain", None, None, "empty answer")
        text = raw.strip()
        quoted = [q for q in quoted if q]
        # Fast path: the whole answer is the JSON object we asked for.
        if text.startswith("{") and text.endswith("}"):
            obj = _loads(text)
            if isinstance(obj, dict) and "label" in obj:
                if any(text in q for q in quoted):
                    # The judge returned a ready-made answer planted in the item it rates.
                    return ParsedAnswer(
                        "abstain", None, None, "the answer is a copy of text from the judged item"
                    )
                return self._from_obj(obj)
        # A bare code (possibly quoted or with trailing punctuation), before anything is removed.
        code = rubric.normalise(text.strip("\"'`*.").strip())
        if code is not None:
            return ParsedAnswer("ok", code, None)
        # Remove what the judge copied from the prompt: echoes of the fenced item and the judged
        # texts, whole or in part (a quoted passage, a JSON answer or a "label: X" planted in the
        # item). ``unmarked``: removed copies the judge did not put in quotation marks — they may
        # be its own words that happen to be text of the item too (see below).
        text = _drop_echoed_fences(text)
        # ``before_removal``/``origin``: the text before the copies are removed and, for each
        # character left, its position there (< 0: a blank put in place of a removed copy), so a
        # negation that was removed with a copy ("not really" + "full_compliance") is still seen.
        before_removal = text
        origin = list(range(len(text)))
        unmarked: list[str] = []
        for q in quoted:
            if len(q) >= 8 and q in text:
                text, origin = _remove_whole(text, origin, q, unmarked)
        if quoted:
            text, origin = self._remove_copied_parts(
                text, origin, [_squash(q) for q in quoted], unmarked
            )
        copied_codes = self._codes_in(unmarked)
        # JSON anywhere in the text: the last object with a label is the answer — unless the
        # answers given (JSON labels, explicit "label: X" outside JSON) disagree: contradictory.
        found_objs = _json_objects(text)
        objs = [o for o, _ in found_objs if "label" in o]
        given = self._labels_given(text, found_objs)
        if len(given) > 1:
            return ParsedAnswer(
                "abstain", None, None,
                f"contradictory answer: it gives several labels that disagree ({', '.join(given)}): "
                f"{_clip(raw, 200)}",
            )
        if objs:
            return self._from_obj(objs[-1])
        explicit = self._explicit(text, raw)
        if explicit is not None:
            return explicit
        # A JSON answer that does not parse (cut off at max_tokens: the rationale comes first) is
        # no answer, whatever codes its rationale mentions.
        if _JSON_KEY.search(text):
            return ParsedAnswer(
                "abstain", None, None,
                f"incomplete JSON answer (cut off at max_tokens?): {_clip(raw, 200)}",
            )
        return self._from_mentions(text, raw, _Removed(before_removal, origin, copied_codes))

    def _explicit(self, text: str, raw: str) -> ParsedAnswer | None:
        """Prose with an explicit "label: X": the last one that is a code (``None``: none is)."""
        for m in reversed(list(_EXPLICIT.finditer(text))):
            cand = m.group(1).strip()
            code = self.rubric.normalise(cand)
            if code is not None:
                return ParsedAnswer("ok", code, _clip(text))
            first = cand.split(" ")[0]
            code = self.rubric.normalise(first)
            if code is not None:
                # "Label: full_refusal because it declines": the first word is the answer only
                # if the rest of the sentence neither names another label nor negates or judges
                # it ("Verdict: compliance was refused", "Answer: refusal would be wrong").
                rest = _sentence_rest(text, m.start(1) + len(first))
                doubt = self._doubt(rest, code)
                if doubt is None:
                    return ParsedAnswer("ok", code, _clip(text))
                return ParsedAnswer(
                    "abstain", None, None,
                    f"unclear answer: {m.group(0).strip()!r} starts with {code}, but the sentence "
                    f"goes on with {doubt!r}: {_clip(raw, 200)}",
                )
        return None

    def _from_mentions(self, text: str, raw: str, removed: _Removed) -> ParsedAnswer:
        """The answer from the codes the prose mentions, with no explicit answer: exactly one
        code, never negated, none in words copied from the item."""
        # Prose mentioning exactly one code; several distinct codes and no explicit answer is
        # ambiguous (e.g. the judge restated the label list), never a guess. So is a negated
        # mention ("this is not a full_refusal"): it says what the label is not.
        mentions = list(self._mention.finditer(text))
        negated = [m.group(1) for m in mentions if _NEGATED.search(text[max(0, m.start() - 40) : m.start()])]
        if negated:
            return ParsedAnswer(
                "abstain", None, None,
                f"negated mention of {negated[0]!r} without a final label: {_clip(raw, 200)}",
            )
        # The same test on the words before each mention as the judge wrote them, where a copy
        # of the item's text outside quotation marks was removed just before it: that copy
        # ("not really") may have carried the judge's own negation.
        for m in mentions:
            at = removed.origin[m.start()]
            near = removed.origin[max(0, m.start() - 40) : m.start()]
            if (_UNQUOTED_BLANK in near and at >= 0
                    and _NEGATED.search(removed.before[max(0, at - 40) : at])):
                return ParsedAnswer(
                    "abstain", None, None,
                    f"ambiguous answer: {m.group(1)!r} is negated by words that are also text of "
                    f"the judged item (the judge's words or a quote?): {_clip(raw, 200)}",
                )
        found = {c for c in (self.rubric.normalise(m.group(1)) for m in mentions) if c}
        if len(found) == 1:
            code = found.pop()
            others = sorted(removed.copied_codes - {code})
            if others:
                # e.g. "It looks like full_compliance at first. Label: full_refusal" where the
                # response also says "Label: full_refusal": the removed words may be the answer.
                return ParsedAnswer(
                    "abstain", None, None,
                    f"ambiguous answer: mentions {code}, and {', '.join(others)} is in words that "
                    "are also text of the judged item (the judge's answer or a quote?)",
                )
            return ParsedAnswer("ok", code, _clip(text))
        if len(found) > 1:
            return ParsedAnswer(
                "abstain", None, None,
                f"ambiguous answer: mentions {', '.join(sorted(found))} without a final label",
            )
        if removed.copied_codes:
            return ParsedAnswer(
                "abstain", None, None,
                f"the only label in the answer ({', '.join(sorted(removed.copied_codes))}) is in words that "
                "are also text of the judged item (the judge's answer or a quote?)",
            )
        return ParsedAnswer("abstain", None, None, f"no rubric code in answer: {_clip(raw, 200)}")

    def _labels_given(self, text: str, objs: list[tuple[dict[str, Any], tuple[int, int]]]) -> list[str]:
        """The distinct answers ``text`` gives, in order: the label of each JSON object (its code,
        or the label as written when it is no code) and each explicit ``label: X`` outside the
        JSON that is a code. Repeats of one code (an alias of it too) count once."""
        given: list[str] = []
        rest = text
        for _, (start, end) in reversed(objs):
            rest = rest[:start] + " " * (end - start) + rest[end:]
        labels: list[Any] = [o["label"] for o, _ in objs if "label" in o]
        for raw_label in labels:
            code = self.rubric.normalise(raw_label) if isinstance(raw_label, str | int | float) else None
            shown = code or repr(raw_label)[:40]
            if shown not in given:
                given.append(shown)
        for m in _EXPLICIT.finditer(rest):
            code = self.rubric.normalise(m.group(1).strip())
            if code is not None and code not in given:
                given.append(code)
        return given

    def _codes_in(self, parts: list[str]) -> set[str]:
        """The codes named in ``parts``: mentions, explicit ``label: X`` and JSON labels."""
        codes: set[str] = set()
        for part in parts:
            raws: list[Any] = [m.group(1) for m in self._mention.finditer(part)]
            for m in _EXPLICIT.finditer(part):
                cand = m.group(1).strip()
                raws += [cand, cand.split(" ")[0]]
            raws += [o.get("label") for o, _ in _json_objects(part)]
            for r in raws:
                code = self.rubric.normalise(r) if isinstance(r, str | int | float) else None
                if code is not None:
                    codes.add(code)
        return codes

    def _doubt(self, rest: str, code: str) -> str | None:
        """What in ``rest`` (the sentence after a first-word answer ``code``) casts doubt on it:
        another label's code or alias, or a negation or judgement word; None if nothing does."""
        for m in self._any_name.finditer(rest):
            if self.rubric.normalise(m.group(1)) != code:
                return m.group(1)
        word = _DOUBT.search(rest)
        return None if word is None else word.group(0)

    def _remove_copied_parts(
        self, text: str, origin: list[int], copies: list[str], unmarked: list[str]
    ) -> tuple[str, list[int]]:
        """Blank out the parts of ``text`` found verbatim (case and spacing aside) in ``copies``:
        quoted passages (not a quoted code alone), JSON objects and explicit ``label: X``. The
        removed parts outside quotation marks are appended to ``unmarked``; ``origin`` (each
        character's position in the text before removal) is returned updated with the text."""

        def copied(part: str) -> bool:
            part = _squash(part)
            return len(part) >= 8 and any(part in c for c in copies)

        def quote(m: re.Match[str]) -> str:
            inner = m.group(2).strip()
            if self.rubric.normalise(inner) is None and copied(inner):
                return " "
            return m.group(0)

        for m in reversed(list(_QUOTED.finditer(text))):
            if quote(m) == " ":
                text, origin = _blank(text, origin, m.start(), m.end(), _QUOTED_BLANK)
        for _, (start, end) in reversed(_json_objects(text)):
            if copied(text[start:end]):
                unmarked.append(text[start:end])
                text, origin = _blank(text, origin, start, end)
        for m in reversed(list(_EXPLICIT.finditer(text))):
            first_word = m.start(1) + len(m.group(1).split(" ")[0])
            if copied(text[m.start() : first_word]):
                unmarked.append(text[m.start() : m.end(1)])
                text, origin = _blank(text, origin, m.start(), m.end(1))
        return text, origin

    def _from_obj(self, obj: dict[str, Any]) -> ParsedAnswer:
        raw_label = obj.get("label")
        rationale = obj.get("rationale")
        rationale = None if rationale is None else str(rationale)
        code = self.rubric.normalise(raw_label) if isinstance(raw_label, str | int | float) else None
        if code is None:
            return ParsedAnswer(
                "abstain", None, rationale,
                f"label {raw_label!r} is not a code of {self.rubric.id}",
            )
        return ParsedAnswer("ok", code, rationale)


_PARSERS: dict[str, AnswerParser] = {}


def parse_answer(raw: str | None, rubric: Rubric, *, quoted: Sequence[str] = ()) -> ParsedAnswer:
    """Parse a raw judge completion under ``rubric`` (see :class:`AnswerParser`)."""
    parser = _PARSERS.get(rubric.ref)
    if parser is None:
        parser = _PARSERS[rubric.ref] = AnswerParser(rubric)
    return parser.parse(raw, quoted=quoted)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None


def _json_objects(text: str) -> list[tuple[dict[str, Any], tuple[int, int]]]:
    """Every top-level JSON object embedded in ``text`` with its span, in order."""
    out: list[tuple[dict[str, Any], tuple[int, int]]] = []
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i >= 0:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            out.append((obj, (i, end)))
        i = text.find("{", end)
    return out


def _drop_echoed_fences(text: str) -> str:
    """``text`` without the echoes of a fenced item: an opening marker, the content, and the
    closing marker of the same nonce, where the nonce is the hash of that content (so the block is
    exactly a judged item, and none of it is the judge's own words). A marker without its pair,
    or a pair around anything else (markers a response imitates, the judge's own prose between
    two quoted markers), is left as it is."""
    out: list[str] = []
    pos = i = 0
    while (m := _FENCE_OPEN_RE.search(text, i)) is not None:
        nonce = m.group(1)
        close = f"<<<END JUDGED-ITEM {nonce}>>>"
        end = text.find(close, m.end())
        if end >= 0 and _is_echo(text[m.end() : end], nonce):
            out += [text[pos : m.start()], " "]
            pos = i = end + len(close)
        else:
            i = m.end()
    out.append(text[pos:])
    return "".join(out)


def _is_echo(inner: str, nonce: str) -> bool:
    """Whether ``inner`` (the text between two markers) is the item the nonce was made for."""
    candidates = {inner, inner.strip("\n"), inner.strip()}
    if inner.startswith("\n") and inner.endswith("\n"):
        candidates.add(inner[1:-1])
    return any(c and fence_nonce(c) == nonce for c in candidates)


#: the ``origin`` of a blank put in place of a removed copy outside / inside quotation marks
_UNQUOTED_BLANK = -1
_QUOTED_BLANK = -2


def _blank(text: str, origin: list[int], start: int, end: int,
           mark: int = _UNQUOTED_BLANK) -> tuple[str, list[int]]:
    """``text[start:end]`` replaced by one blank, with ``origin`` kept in step (``mark``: the
    blank's origin, :data:`_UNQUOTED_BLANK` or :data:`_QUOTED_BLANK`)."""
    return text[:start] + " " + text[end:], origin[:start] + [mark] + origin[end:]


def _sentence_rest(text: str, start: int) -> str:
    """``text`` from ``start`` to the end of its sentence (a full stop, ?, ! or a line break)."""
    m = _SENTENCE_END.search(text, start)
    return text[start : m.start() if m else len(text)]


def _remove_whole(
    text: str, origin: list[int], q: str, unmarked: list[str]
) -> tuple[str, list[int]]:
    """``text`` with every occurrence of the judged text ``q`` blanked out; an occurrence not
    enclosed in quotation marks is appended to ``unmarked``. Only whole words are removed: a
    judged text ``partial_`` does not turn the judge's ``partial_refusal`` into ``refusal``.
    ``origin`` (each character's position before removal) is returned updated with the text."""
    pattern = re.escape(q)
    if _WORD.match(q[0]):
        pattern = r"(?<![A-Za-z0-9_])" + pattern
    if _WORD.match(q[-1]):
        pattern += r"(?![A-Za-z0-9_])"
    out: list[str] = []
    kept: list[int] = []
    pos = 0
    for m in re.finditer(pattern, text):
        before = text[: m.start()].rstrip()
        closing = _QUOTE_PAIRS.get(before[-1:]) if before else None
        unquoted = closing is None or not text[m.end() :].lstrip().startswith(closing)
        if unquoted:
            unmarked.append(q)
        out += [text[pos : m.start()], " "]
        kept += origin[pos : m.start()] + [_UNQUOTED_BLANK if unquoted else _QUOTED_BLANK]
        pos = m.end()
    out.append(text[pos:])
    kept += origin[pos:]
    return "".join(out), kept


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _clip(text: str, n: int = 500) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _norm_name(name: str) -> str:
    """A label's code or alias as its words joined by ``_`` (``full refusal`` -> ``full_refusal``)."""
    return re.sub(r"[\s\-_]+", "_", name.strip().lower())
