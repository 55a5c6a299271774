"""What a fake-server script sees and answers: :class:`FakeRequest` in, a string or :class:`Reply` out.

A *script* is any function ``FakeRequest -> str | Reply``; :func:`default_script` is the one the
server uses when none is given, :func:`label_reply` the JSON a well-behaved judge answers.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from judgekit.rubric.prompt import judged_response, unfence

__all__ = ["FakeRequest", "Reply", "Script", "default_script", "label_reply", "parse_request"]


@dataclass
class FakeRequest:
    """What the script sees of one request."""

    api: str  #: "anthropic" or "openai"
    model: str
    system: str
    user: str  #: text of the last user message
    body: dict[str, Any]
    has_auth: bool  #: an API key header arrived (its value is never kept)
    headers: dict[str, str] = field(default_factory=dict)  #: request headers, keys removed

    @property
    def item(self) -> str | None:
        """The fenced item (conversation + response), as the judge sees it as data."""
        return unfence(self.user)

    @property
    def response(self) -> str | None:
        """The response being judged."""
        return judged_response(self.user)

    @property
    def codes(self) -> list[str]:
        """The rubric codes offered (from the answer schema, else from the system prompt)."""
        schema = _schema_of(self.body)
        if schema:
            enum = schema.get("properties", {}).get("label", {}).get("enum")
            if enum:
                return [str(c) for c in enum]
        m = re.search(r"exactly one of: ([a-z0-9_, ]+)\.", self.system)
        return [c.strip() for c in m.group(1).split(",")] if m else []


@dataclass
class Reply:
    """A scripted answer; token counts default to ~4 characters a token."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    #: ``(token, logprob)`` pairs returned when the request asks for ``logprobs`` (OpenAI API);
    #: None: the text in 4-character tokens, each with log-probability 0 (probability 1)
    logprobs: list[tuple[str, float]] | None = None


Script = Callable[[FakeRequest], "str | Reply"]


def label_reply(label: str, rationale: str = "scripted answer") -> str:
    """The JSON answer a well-behaved judge gives."""
    return json.dumps({"rationale": rationale, "label": label})


def default_script(req: FakeRequest) -> str:
    """A ``LABEL=<code>`` marker in the judged response wins; else a stable pick from the codes."""
    resp = req.response or ""
    m = re.search(r"LABEL=([a-z0-9_]+)", resp)
    codes = req.codes or ["unknown"]
    if m:
        return label_reply(m.group(1))
    return label_reply(codes[zlib.crc32(resp.encode()) % len(codes)])


def parse_request(api: str, body: dict[str, Any], headers: dict[str, str]) -> FakeRequest:
    """The :class:`FakeRequest` of an Anthropic Messages or OpenAI Chat Completions body.

    The API key headers are dropped; only whether one arrived is kept (``has_auth``).
    """
    messages = body.get("messages") or []
    if api == "anthropic":
        system = _text_of(body.get("system"))
    else:
        system = "\n".join(_text_of(m.get("content")) for m in messages if m.get("role") == "system")
    users = [m for m in messages if m.get("role") == "user"]
    user = _text_of(users[-1].get("content")) if users else ""
    has_auth = bool(headers.get("authorization") or headers.get("x-api-key"))
    kept = {k: v for k, v in headers.items() if k not in ("authorization", "x-api-key", "api-key")}
    return FakeRequest(api, str(body.get("model", "")), system, user, body, has_auth, kept)


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        return rf.get("json_schema", {}).get("schema")
    oc = body.get("output_config")
    if isinstance(oc, dict):
        fmt = oc.get("format")
        if isinstance(fmt, dict):
            return fmt.get("schema")
    return None
