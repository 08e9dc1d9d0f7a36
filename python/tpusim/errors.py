"""Exceptions raised by tpusim.

Every error of the C++ libraries arrives as one of these classes, with the C++ message unchanged:
it names the file and ``line:column`` (HLO text, with the line and a caret) or the config key
path (``configs/x.yaml: core.mxu.rows: expected a positive integer, got "abc"``). The classes
mirror the ``tpusim`` command's exit codes: 1 for :class:`CheckFailedError`, 2 for bad input
(:class:`InvalidInputError`, :class:`NotFoundError`, :class:`UnsupportedError`,
:class:`ResourceExhaustedError`), 3 for :class:`InternalError`.
"""

from __future__ import annotations

from typing import Any, Optional


class Error(Exception):
    """Base class of every tpusim error. ``str(e)`` is the located message."""

    #: The ``tpusim`` command's exit code for this kind of error.
    exit_code: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputError(Error, ValueError):
    """Malformed input: HLO text, a config value, an argument out of range (exit code 2)."""


class NotFoundError(Error, FileNotFoundError):
    """A file, config name, computation or instruction that does not exist (exit code 2)."""


class UnsupportedError(Error, NotImplementedError):
    """Valid input tpusim cannot handle yet, e.g. an HLO op with no lowering (exit code 2)."""


class ResourceExhaustedError(Error):
    """A program or tensor that does not fit (VMEM, HBM), or a run past max_cycles / max_seconds
    (exit code 2)."""


class InternalError(Error):
    """A bug in tpusim (exit code 3)."""

    exit_code = 3


class CheckFailedError(Error):
    """Simulated values disagree with the CPU evaluator beyond the tolerance (exit code 1).

    ``report`` holds the full :class:`tpusim.Report` of the run (its ``check.reason`` names the
    first mismatching element) when the run itself completed.
    """

    exit_code = 1

    def __init__(self, message: str, report: Optional[Any] = None) -> None:
        super().__init__(message)
        self.report = report


class FrontEndError(Error):
    """A JAX or PyTorch function could not be lowered to HLO (the framework's message follows)."""


__all__ = [
    "Error",
    "InvalidInputError",
    "NotFoundError",
    "UnsupportedError",
    "ResourceExhaustedError",
    "InternalError",
    "CheckFailedError",
    "FrontEndError",
]
