"""File-system errors as one sentence: an ``OSError`` (a name too long, a folder that cannot be
created, no permission, a full disk) names its file, excerpted, what went wrong and the fix."""

from __future__ import annotations

import errno

from judgekit.errors import JudgekitError, excerpt

#: what to do about an error, by errno
_FIXES = {
    errno.ENAMETOOLONG: "use a shorter name (at most 255 bytes for each part of a path)",
    errno.ENOENT: "check the path (its folder must exist and be writable)",
    errno.ENOTDIR: "check the path (a part of it is a file, not a folder)",
    errno.EISDIR: "give a file, not a folder",
    errno.EACCES: "check its permissions or choose another path",
    errno.EPERM: "check its permissions or choose another path",
    errno.EROFS: "choose a path on a writable file system",
    errno.ENOSPC: "free some disk space and run it again",
    errno.EDQUOT: "free some disk space and run it again",
    errno.ELOOP: "check the path (it has a loop of symbolic links)",
    errno.EEXIST: "remove it or choose another path",
}


def os_error_message(exc: OSError, doing: str = "") -> str:
    """One sentence for ``exc``: the file (excerpted), ``doing`` (e.g. "cannot write it"), the
    system's reason and the fix."""
    name = exc.filename if exc.filename is not None else exc.filename2
    what = "a file" if name is None else excerpt(str(name), 80)
    reason = (exc.strerror or type(exc).__name__).rstrip(".").lower()
    fix = _FIXES.get(exc.errno or -1, "check the path")
    head = f"{what}: {doing} ({reason})" if doing else f"{what}: {reason}"
    return f"{head}; {fix}."


def os_error(exc: OSError, doing: str = "") -> JudgekitError:
    """:func:`os_error_message` as a :class:`JudgekitError` (exit 2), to ``raise ... from None``."""
    return JudgekitError(os_error_message(exc, doing))
