"""Exceptions of the hubprof bindings: one class per hp_status error of the hub, all under hubprof.Error.

The message of an exception is the hub's one-line explanation naming the file ("x.db: truncated at byte 4096").
"""
# SPDX-License-Identifier: MIT
from __future__ import annotations

import errno

from . import _lib


class Error(Exception):
    """A hub call failed. `status` is the hp_status value (negative), `status_text` the hub's short text
    for it, `path` the store concerned (when known); str(e) is the hub's one-line message naming the file."""

    status: int = 0

    def __init__(self, message: str, status: int | None = None, path: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message
        self.path = path
        self.args = (message,)
        if isinstance(self, OSError):  # OSError.__new__ took (message, status, path) for (errno, strerror, file)
            self.errno = errno.ENOENT if isinstance(self, FileNotFoundError) else None
            self.strerror = message
            self.filename = path

    @property
    def status_text(self) -> str:
        """hp_status_str of the status ("corrupt data")."""
        return status_text(self.status)

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(Error, ValueError):
    """HP_ERR_INVALID: a bad argument (unknown table, bad mode, …)."""

    status = -1


class OutOfMemoryError(Error, MemoryError):
    """HP_ERR_NOMEM: the hub ran out of memory."""

    status = -2


class IOFailedError(Error, OSError):
    """HP_ERR_IO: a system call failed (open, write, rename, disk full …)."""

    status = -3


class NotFoundError(Error, FileNotFoundError):
    """HP_ERR_NOT_FOUND: the path does not exist."""

    status = -4


class FormatError(Error):
    """HP_ERR_FORMAT: not a hubprof store of any known format (a foreign file), or an unknown format name."""

    status = -5


class VersionError(Error):
    """HP_ERR_VERSION: a known format, but a version this build cannot read."""

    status = -6


class CorruptError(Error):
    """HP_ERR_CORRUPT: the store is damaged (bad checksum, bad structure)."""

    status = -7


class TruncatedError(Error):
    """HP_ERR_TRUNCATED: the store ends early; the complete part before the cut is readable."""

    status = -8


class UnsupportedError(Error):
    """HP_ERR_UNSUPPORTED: the operation is not supported by this format or mode."""

    status = -9


class ConstraintError(Error):
    """HP_ERR_CONSTRAINT: the data breaks a rule of the model (duplicate id, dangling reference)."""

    status = -10


class CancelledError(Error):
    """HP_ERR_CANCELLED: stopped on request; nothing was committed."""

    status = -11


_BY_STATUS: dict[int, type[Error]] = {
    c.status: c
    for c in (InvalidArgumentError, OutOfMemoryError, IOFailedError, NotFoundError, FormatError, VersionError,
              CorruptError, TruncatedError, UnsupportedError, ConstraintError, CancelledError)
}

STATUS_NAMES = {
    0: "HP_OK", 1: "HP_END", -1: "HP_ERR_INVALID", -2: "HP_ERR_NOMEM", -3: "HP_ERR_IO",
    -4: "HP_ERR_NOT_FOUND", -5: "HP_ERR_FORMAT", -6: "HP_ERR_VERSION", -7: "HP_ERR_CORRUPT",
    -8: "HP_ERR_TRUNCATED", -9: "HP_ERR_UNSUPPORTED", -10: "HP_ERR_CONSTRAINT",
    -11: "HP_ERR_CANCELLED",
}


def status_text(status: int) -> str:
    """The hub's short English text for a status (hp_status_str)."""
    return _lib.decode(_lib.lib.hp_status_str(status))


def error_class(status: int) -> type[Error]:
    """The exception class for an hp_status (hubprof.Error for a status these bindings do not know)."""
    return _BY_STATUS.get(status, Error)


def make_error(status: int, store_handle: int | None = None, path: str | None = None,
               context: str | None = None) -> Error:
    """The exception for a failed call: the hub's message of the store when it has one, else
    "PATH: status text"; `context` (what was being done) is appended in parentheses."""
    msg = ""
    if store_handle:
        msg = _lib.decode(_lib.lib.hp_store_error(store_handle))
    if not msg:
        msg = f"{path}: {status_text(status)}" if path else status_text(status)
    if context:
        msg = f"{msg} ({context})"
    return error_class(status)(msg, status, path)


class HubprofWarning(UserWarning):
    """Base of the warnings of the hubprof bindings."""


class LowerBoundWarning(HubprofWarning):
    """Figures of an analysis are lower bounds: the collector lost records, or the store is damaged."""


class DamagedInputWarning(HubprofWarning):
    """merge() read a damaged input only up to its damage (strict=True refuses instead)."""
