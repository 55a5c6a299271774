"""Credentials in URLs, redacted before anything is shown or stored (issue 20 item 9).

A judge's spec or base URL may carry a secret: ``http://user:password@host`` (userinfo) or a
query token (``?api_key=...``, ``&token=...``, ``&sig=...``). :func:`redact` replaces them with
``***`` in every URL of a text — the run summary, the ``calls`` and ``judge_batches`` tables, error
messages, reports and verdicts all get the spec through it — and leaves everything else of the
text as written (``?api-version=2024-06-01`` is kept: it changes what the server does).

The judge's identity and cache keys are made from the redacted spec, so a changed password or
token is not a changed judge (a credential is transport, as the base URL of an
``openai-compatible:`` judge is), and no hash stored anywhere is a hash of a secret.

>>> redact("openai-compatible:http://alice:s3cret@gpu-1:8000/v1?api_key=abc&api-version=2#qwen")
'openai-compatible:http://***@gpu-1:8000/v1?api_key=***&api-version=2#qwen'
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact"]

#: what stands in for a credential
REDACTED = "***"
#: a URL: the scheme, the userinfo up to the last ``@`` of the authority (a password may hold an
#: unescaped ``@``), the rest of the authority and path, the query (linear: no nested repeats)
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,30}://)(?:([^\s/?#]*)@)?([^\s?#]*)(\?[^\s#]*)?")
#: a query parameter whose name says it carries a secret (case-insensitive, anywhere in the name:
#: ``api_key``, ``apiKey``, ``access_token``, ``X-Amz-Signature``, ``sig``, ``password``, ...)
_SECRET_PARAMETER = re.compile(r"key|token|secret|pass|pwd|auth|cred|sig|session|jwt|bearer",
                              re.IGNORECASE)
_PARAM = re.compile(r"([?&;])([^=&;#\s]*)=([^&;#\s]*)")


def _query(query: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(3) and _SECRET_PARAMETER.search(m.group(2)):
            return f"{m.group(1)}{m.group(2)}={REDACTED}"
        return m.group(0)

    return _PARAM.sub(one, query)


def _url(m: re.Match[str]) -> str:
    scheme, userinfo, rest, query = m.group(1), m.group(2), m.group(3), m.group(4)
    out = scheme + (f"{REDACTED}@" if userinfo is not None else "") + rest
    return out + (_query(query) if query else "")


def redact(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``: the userinfo
    (``user:password@``, or a token alone before ``@``) and the values of query parameters
    named like secrets (:data:`_SECRET_PARAMETER`). Text without ``://`` is returned as it is."""
    if "://" not in text:
        return text
    return _URL.sub(_url, text)
