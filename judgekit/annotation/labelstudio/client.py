"""The Label Studio REST API calls judgekit needs, as a thin adapter over ``label-studio-sdk``.

The official SDK (installed with the ``labelstudio`` extra) sends the requests; this module adds
what judgekit promises its users on top of it: the address and token from arguments or
``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY``, checked before anything is sent; every failure as
one :class:`~judgekit.errors.JudgekitError` sentence that names the variable to fix and never
contains the token, the address or a provider key (a reason quoted from the server's error body
is redacted by :class:`~judgekit.annotation.labelstudio.redact.Redactor` first); plain dicts as the server sent them (read from the SDK's raw
responses, or dumped from its models in wire form for the paged lists); paging by page number;
no retries (a retried import could add its tasks twice); no redirects followed.

The SDK is imported, and its client built, on the first call: constructing a
:class:`LabelStudioClient` (e.g. for a pull from an export file that may never need the server)
costs nothing. The token goes to the SDK as its ``api_key``: a legacy token (Account & Settings →
Access Token with legacy tokens enabled) is sent as ``Authorization: Token <token>``, as judgekit
always sent it; the SDK reads a JWT-shaped token as a personal access token and exchanges it at
``/api/token/refresh/`` for ``Bearer`` access tokens.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from judgekit.annotation.labelstudio.redact import ENV_TOKEN as ENV_TOKEN  # re-exported
from judgekit.annotation.labelstudio.redact import ENV_URL as ENV_URL  # re-exported
from judgekit.annotation.labelstudio.redact import Redactor
from judgekit.annotation.labelstudio.values import kind, rater_name
from judgekit.errors import JudgekitError

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio

_T = TypeVar("_T")


class LabelStudioClient:
    """A small client for the Label Studio REST API (the calls judgekit needs).

    ``url``/``token`` default to ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY``. Every failure
    is a :class:`JudgekitError` sentence that names the variable to fix and never contains the
    token or the address. ``timeout`` (seconds) bounds each request.
    """

    def __init__(self, url: str | None = None, token: str | None = None, *, timeout: float = 60) -> None:
        url = (url or os.environ.get(ENV_URL) or "").strip()
        token = (token or os.environ.get(ENV_TOKEN) or "").strip()
        if not url:
            raise JudgekitError(
                f"No Label Studio address: pass --url or set {ENV_URL} (e.g. http://127.0.0.1:8080)."
            )
        if not token:
            raise JudgekitError(
                f"No Label Studio API token: pass --token or set {ENV_TOKEN} (Account & Settings → "
                "Access Token in Label Studio)."
            )
        if not re.match(r"^https?://", url):
            raise JudgekitError(f"The Label Studio address in --url / {ENV_URL} must start with http:// or https://.")
        # An HTTP header carries printable ASCII only; say so without echoing the token.
        if not re.fullmatch(r"[\x21-\x7e]+", token):
            raise JudgekitError(
                f"The Label Studio API token in --token / {ENV_TOKEN} contains spaces or characters "
                "that are not plain ASCII; copy it again from Account & Settings → Access Token."
            )
        if importlib.util.find_spec("label_studio_sdk") is None:  # pragma: no cover - the extra brings it
            raise JudgekitError(
                "The Label Studio bridge needs label-studio-sdk: pip install 'judgekit[labelstudio]'."
            )
        import httpx  # the SDK's transport (a dependency of label-studio-sdk)

        try:
            httpx.URL(url)
        except httpx.InvalidURL:
            raise JudgekitError(
                f"The Label Studio address in --url / {ENV_URL} is not a valid URL (check the host "
                "and the port), e.g. http://127.0.0.1:8080."
            ) from None
        # A trailing slash keeps a path prefix (https://host/labelstudio) when the SDK joins the
        # token refresh path onto the address; request paths are joined without doubling it.
        self._url = url.rstrip("/") + "/"
        self._token = token
        #: keeps the token, the address and every key in the environment out of messages
        self.redactor = Redactor.for_label_studio(url, token)
        self._timeout = timeout
        # Our own httpx client: closed by close(), and it follows no redirects.
        self._http = httpx.Client(timeout=timeout)
        self._sdk: LabelStudio | None = None

    def __repr__(self) -> str:
        return "LabelStudioClient()"  # neither the address nor the token

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LabelStudioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- plumbing
    def _client(self) -> LabelStudio:
        if self._sdk is None:
            from label_studio_sdk import LabelStudio

            self._sdk = LabelStudio(
                base_url=self._url,
                api_key=self._token,
                headers={"Accept": "application/json"},
                timeout=self._timeout,
                max_retries=0,
                httpx_client=self._http,
            )
        return self._sdk

    def call(self, method: str, path: str, send: Callable[[LabelStudio], _T]) -> _T:
        """``send(sdk)`` — one API call, named ``method path`` in messages — and its result.

        HTTP and connection failures, refused tokens and answers that are not JSON (or not in
        the shape the SDK reads) become one :class:`JudgekitError` sentence.
        """
        with self.redactor.guard():
            return self._call(method, path, send)

    def _call(self, method: str, path: str, send: Callable[[LabelStudio], _T]) -> _T:
        import httpx
        from label_studio_sdk.core.api_error import ApiError
        from label_studio_sdk.core.parse_error import ParsingError

        try:
            return send(self._client())
        except httpx.TimeoutException:
            raise JudgekitError(
                f"The Label Studio server in --url / {ENV_URL} did not answer {method} {path} in "
                "time; check that it is running and not overloaded."
            ) from None
        except httpx.HTTPError as exc:
            raise JudgekitError(
                f"Cannot reach the Label Studio server in --url / {ENV_URL} "
                f"({type(exc).__name__}); start it (bash scripts/labelstudio-server.sh start) or "
                "fix the address."
            ) from None
        except ApiError as exc:
            status = exc.status_code or 0
            if status in (401, 403):
                raise JudgekitError(
                    f"Label Studio refused the API token ({status}); set {ENV_TOKEN} (or "
                    "--token) to a valid token from Account & Settings → Access Token (legacy tokens "
                    "must be enabled in the organization settings)."
                ) from None
            if status >= 400:
                raise JudgekitError(
                    f"Label Studio answered {status} to {method} {path}: "
                    f"{self.redactor.excerpt(_detail(exc.body))}."
                ) from None
            raise _not_json(method, path) from None  # a success the SDK could not read as JSON
        except (ParsingError, json.JSONDecodeError):
            raise _not_json(method, path) from None
        except TypeError:
            # The SDK builds its models with ``**body``: JSON that is not an object where it
            # expects one, e.g. a bare list from a Label Studio older than the SDK supports.
            raise JudgekitError(
                f"Label Studio answered {method} {path} in a form label-studio-sdk cannot read (a "
                f"JSON list, not an object); is {ENV_URL} a Label Studio server of a supported "
                "version?"
            ) from None

    # ----------------------------------------------------------------- API
    def whoami(self) -> dict[str, Any]:
        """The user the token belongs to (also checks address and token)."""
        data: dict[str, Any] = self.call(
            "GET", "/api/current-user/whoami",
            lambda ls: ls.users.with_raw_response.whoami().response.json(),
        )
        return data

    def projects(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        page = 1
        while True:

            def send(ls: LabelStudio, page: int = page) -> Any:
                return ls.projects.with_raw_response.list(page=page, page_size=100)

            pager = self.call("GET", "/api/projects/", send)
            for p in _listed(pager.items, "GET", "/api/projects/"):
                out.append(_checked_project(p, "GET", "/api/projects/"))
            if not pager.response.next:
                return out
            page += 1

    def find_project(self, title: str) -> dict[str, Any] | None:
        """The project called ``title``, or ``None``; several of that name is an error."""
        found = [p for p in self.projects() if p.get("title") == title]
        if len(found) > 1:
            ids = ", ".join(str(p["id"]) for p in found)
            raise JudgekitError(
                f"Label Studio has {len(found)} projects named {title!r} (ids {ids}); rename all "
                "but one so judgekit knows which to use."
            )
        return found[0] if found else None

    def project(self, title: str) -> dict[str, Any]:
        """The project called ``title``; a missing project is an error listing the others."""
        found = self.find_project(title)
        if found is None:
            names = sorted(p.get("title", "") for p in self.projects())
            have = ", ".join(repr(n) for n in names[:10]) if names else "none"
            raise JudgekitError(
                f"Label Studio project {title!r} does not exist (projects there: {have}); check "
                "the name or push to it first."
            )
        return found

    def create_project(self, title: str, config: str, description: str) -> dict[str, Any]:
        data = self.call(
            "POST", "/api/projects/",
            lambda ls: ls.projects.with_raw_response.create(
                title=title, label_config=config, description=description
            ).response.json(),
        )
        return _checked_project(data, "POST", "/api/projects/")

    def tasks(self, project_id: int, *, with_annotations: bool = True, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """All tasks of a project, page by page (with their annotations unless told not to)."""
        page = 1
        seen = 0
        fields: Literal["all", "task_only"] = "all" if with_annotations else "task_only"
        while True:

            def send(ls: LabelStudio, page: int = page) -> Any:
                return ls.tasks.with_raw_response.list(
                    project=project_id, page=page, page_size=page_size, fields=fields
                )

            pager = self.call("GET", "/api/tasks/", send)
            tasks = _listed(pager.items, "GET", "/api/tasks/")
            total = getattr(pager.response, "total", None) or 0
            if isinstance(total, bool) or not isinstance(total, int):
                raise _bad_answer("GET", "/api/tasks/", f"its 'total' is {kind(total)}, not a count")
            yield from tasks
            seen += len(tasks)
            if not tasks or seen >= total:
                return
            page += 1

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> list[int]:
        """Import task data dicts; returns the new task ids."""
        # Plain dicts, not the SDK's ImportApiRequest models: those would send every unset field.
        request = cast(Any, [{"data": t} for t in tasks])
        data = self.call(
            "POST", f"/api/projects/{project_id}/import",
            lambda ls: ls.projects.with_raw_response.import_tasks(
                id=project_id, request=request, return_task_ids=True
            ).response.json(),
        )
        ids = data.get("task_ids", []) if isinstance(data, dict) else None
        if not isinstance(ids, list):
            raise _bad_answer("POST", f"/api/projects/{project_id}/import", "it has no list of task ids")
        return ids

    def set_overlap(self, task_id: int, annotators: int) -> None:
        """Ask for ``annotators`` distinct annotations of a task (before anyone annotates it)."""
        self.call(
            "PATCH", f"/api/tasks/{task_id}/",
            lambda ls: ls.tasks.with_raw_response.update(id=str(task_id), overlap=annotators),
        )

    def users(self) -> dict[int, str]:
        """Label Studio user id → stable rater id (email, else username)."""
        data = self.call("GET", "/api/users/", lambda ls: ls.users.with_raw_response.list().response.json())
        rows = data.get("results", []) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise _bad_answer("GET", "/api/users/", "it is not a list of users")
        out: dict[int, str] = {}
        for u in rows:
            if not isinstance(u, dict):
                raise _bad_answer("GET", "/api/users/", f"a user is {kind(u)}, not an object")
            if any(u.get(k) is not None and not isinstance(u[k], str) for k in ("email", "username")):
                raise _bad_answer("GET", "/api/users/", "a user's email or username is not text")
            name = rater_name(u)
            if not name:
                continue
            uid = u.get("id")
            if isinstance(uid, bool) or not isinstance(uid, int):
                raise _bad_answer("GET", "/api/users/", f"user {name!r} has no whole-number id")
            out[uid] = name
        return out


def _plain(model: Any) -> Any:
    """An SDK model of a listed object as the plain dict the server sent (anything else as it
    is: the SDK builds its models without checking the answer, the caller checks)."""
    dump = getattr(model, "model_dump", None)
    if dump is None:
        return model
    with warnings.catch_warnings():  # pydantic's warnings about fields of another type
        warnings.simplefilter("ignore")
        return dump(mode="json", by_alias=True, exclude_unset=True)


def _listed(items: Any, method: str, path: str) -> list[dict[str, Any]]:
    """The objects of a page of a list answer, as plain dicts; anything else is one sentence."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise _bad_answer(method, path, f"its list is {kind(items)}")
    out = [_plain(x) for x in items]
    bad = next((x for x in out if not isinstance(x, dict)), None)
    if bad is not None:
        raise _bad_answer(method, path, f"an entry of its list is {kind(bad)}, not an object")
    return out


def _checked_project(p: Any, method: str, path: str) -> dict[str, Any]:
    """A project as the server sent it: an object with a whole-number id, a title and a
    description that are text."""
    if not isinstance(p, dict):
        raise _bad_answer(method, path, f"a project is {kind(p)}, not an object")
    if isinstance(p.get("id"), bool) or not isinstance(p.get("id"), int):
        raise _bad_answer(method, path, "a project has no whole-number id")
    for field in ("title", "description"):
        if p.get(field) is not None and not isinstance(p[field], str):
            raise _bad_answer(method, path, f"project {p['id']}'s {field} is not text")
    return p


def _bad_answer(method: str, path: str, what: str) -> JudgekitError:
    return JudgekitError(
        f"Label Studio answered {method} {path} in a shape judgekit cannot use ({what}); is "
        f"{ENV_URL} a Label Studio server of a supported version?"
    )


def _not_json(method: str, path: str) -> JudgekitError:
    return JudgekitError(
        f"Label Studio answered {method} {path} with something that is not JSON; is "
        f"{ENV_URL} the address of a Label Studio server?"
    )


def _detail(body: Any) -> str:
    """The reason in an error answer's body (the SDK hands over a body that is not JSON as text),
    whole: the caller redacts it, then cuts it short."""
    if isinstance(body, str):
        return "no details"
    if isinstance(body, dict):
        errs = body.get("validation_errors")
        if isinstance(errs, dict) and errs:
            return "; ".join(f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
                             for k, v in errs.items())
        return str(body.get("detail") or body)
    return str(body)
