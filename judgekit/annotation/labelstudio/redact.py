"""Secrets kept out of every message of the Label Studio bridge.

A Label Studio server (or a proxy in front of it) may echo the request's ``Authorization``
header, or anything else it was sent, in an error body; judgekit quotes the reason from such a
body. Before any message leaves the bridge, :class:`Redactor` replaces in it

* the configured token and address (``--token`` / ``LABEL_STUDIO_API_KEY``, ``--url`` /
  ``LABEL_STUDIO_URL``), also as they appear JSON-escaped, Python-quoted or URL-encoded (one
  shorter than 8 characters only where it stands as a word of its own);
* the value of every environment variable named like a key or token (``ANTHROPIC_API_KEY``,
  ``OPENAI_API_KEY``, any ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``:
  the provider keys judgekit reads, and the variable a panel's ``api_key_env`` names when it is
  named like one), 8 characters or longer;
* what follows ``Token``, ``Bearer`` or ``Basic`` when it looks like a credential (12 characters or
  more, a digit among them), and JWT-shaped strings
  (the access tokens the SDK obtains for a personal access token are never configured here).

The text is redacted before it is cut to a short excerpt, so a secret straddling the cut cannot
leave its first half behind.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from judgekit.errors import JudgekitError

REDACTED = "[redacted]"
#: environment variables whose values are secrets (matched on the upper-cased name)
_SECRET_VAR = re.compile(r"(API_?KEY|_KEY|_TOKEN|_SECRET|_PASSWORD|_PASSWD)$")
#: environment values shorter than this are not treated as secrets (``X_TOKEN=1`` would otherwise
#: turn every "1" in a message into the marker)
_MIN_ENV_SECRET = 8
_AUTH_WORD = re.compile(r"(?i)\b(token|bearer|basic)(\s*[:=]?\s+)(?=[\x21-\x7e]*[0-9])([\x21-\x7e]{12,})")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")

#: the environment variables of the Label Studio address and API token
ENV_URL = "LABEL_STUDIO_URL"
ENV_TOKEN = "LABEL_STUDIO_API_KEY"


def _forms(secret: str) -> set[str]:
    """The ways a secret can be written into a message: as is, JSON-escaped, Python-quoted,
    URL-encoded."""
    forms = {secret, json.dumps(secret)[1:-1], repr(secret)[1:-1], urllib.parse.quote(secret, safe="")}
    return {f for f in forms if f}


class Redactor:
    """Replaces secrets in text (see the module docstring)."""

    def __init__(
        self,
        secrets: Iterable[str | None] = (),
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        found: set[str] = set()
        for s in secrets:
            if s and s.strip():
                found |= _forms(s) | _forms(s.strip())
        for name, value in (os.environ if env is None else env).items():
            if _SECRET_VAR.search(name.upper()) and len(value.strip()) >= _MIN_ENV_SECRET:
                found |= _forms(value) | _forms(value.strip())
        # longest first: a secret that contains another is replaced whole
        self._secrets = sorted(found, key=len, reverse=True)

    @classmethod
    def for_label_studio(cls, url: str | None = None, token: str | None = None) -> Redactor:
        """A redactor for the bridge: the given address and token, the ones in the environment,
        and every key-like variable."""

        secrets = [token, os.environ.get(ENV_TOKEN)]
        for u in (url, os.environ.get(ENV_URL)):
            if u and u.strip():
                secrets.append(u.strip().rstrip("/"))
                password = urllib.parse.urlsplit(u.strip()).password if "@" in u else None
                secrets.append(password)
        return cls(secrets)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[redacted]``."""
        for s in self._secrets:
            if len(s) < _MIN_ENV_SECRET:  # a short secret only as a word of its own ("t" in "text" stays)
                text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(s)}(?![A-Za-z0-9_])", REDACTED, text)
            elif s in text:
                text = text.replace(s, REDACTED)
        text = _AUTH_WORD.sub(lambda m: f"{m[1]}{m[2]}{REDACTED}", text)
        return _JWT.sub(REDACTED, text)

    def excerpt(self, text: str, limit: int = 300) -> str:
        """The redacted text, cut to ``limit`` characters (redacted before the cut)."""
        text = self.text(text)
        return text if len(text) <= limit else text[: limit - 1] + "…"

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Redact the message of any :class:`JudgekitError` raised inside (same error, same class
        and exit code, its text redacted)."""
        try:
            yield
        except JudgekitError as exc:
            exc.args = tuple(self.text(a) if isinstance(a, str) else a for a in exc.args)
            raise
