"""Parsing of ``NAME[@VERSION]`` references to versioned things (test sets, configs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from evalplat.errors import InputError, NotFoundError
from evalplat.inputs import validation


@dataclass(frozen=True)
class VersionRef:
    """``name`` plus a version number, or None for the latest version."""

    name: str
    version: int | None = None

    def __str__(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"


def parse_version_ref(text: str, what: str = "reference") -> VersionRef:
    """``cranfield`` → latest; ``cranfield@2`` → version 2; ``cranfield@latest`` → latest.
    A run id (``#3``, ``run:3``) is refused with the form that names a version."""
    if _names_a_run(text.strip()):
        raise InputError(
            f"invalid {what} {text!r}: {text.strip()} names a run; a version is written "
            "NAME@VERSION (e.g. docs-bm25@3)"
        )
    name, sep, version = text.rpartition("@")
    if not sep:
        name, version = text, ""
    if not name.strip():
        raise InputError(f"invalid {what} {text!r}: expected NAME or NAME@VERSION")
    # looked up before any name check: text the database cannot even compare is refused here
    validation.check_free_text(name, what)
    if not sep or version == "latest":
        return VersionRef(name)
    if not version.isascii() or not version.isdigit() or len(version) > 9 or int(version) < 1:
        # "NAME@" too: an empty version is a typo, not "the latest"
        raise InputError(
            f"invalid {what} {text!r}: the version after '@' must be a number from 1, or 'latest'"
        )
    return VersionRef(name, int(version))


def _names_a_run(text: str) -> bool:
    """``#3`` or ``run:3``: how a run id is written where a version could be read."""
    return any(text.startswith(p) and text[len(p) :].isdigit() for p in ("#", "run:"))


def check_name(name: str, what: str) -> str:
    """Names are shown in tables and used in references, so keep them printable and short
    (see :mod:`evalplat.inputs.validation` for the limits)."""
    if not name or not name.strip():
        raise InputError(f"{what} name must not be empty")
    if "@" in name:
        raise InputError(f"{what} name {name!r} must not contain '@' (it starts a version)")
    if _names_a_run(name.strip()):
        raise InputError(f"{what} name {name!r} is how a run id is written (#N, run:N)")
    return validation.check_name(name, f"{what} name")


def check_label(label: str) -> str:
    """A config version's label (a git sha, a ticket): one short line."""
    return validation.check_name(label, "label", max_length=validation.LABEL_MAX_LENGTH)


class _Versioned(Protocol):
    @property
    def version(self) -> int: ...


V = TypeVar("V", bound=_Versioned)


def pick_version(versions: Sequence[V], ref: VersionRef, what: str) -> V:
    """The version ``ref`` names among ``versions`` (oldest first); None means the latest."""
    if not versions:
        raise NotFoundError(f"{what} '{ref.name}' has no versions")
    if ref.version is None:
        return versions[-1]
    for version in versions:
        if version.version == ref.version:
            return version
    known = ", ".join(str(v.version) for v in versions)
    raise NotFoundError(f"{what} '{ref.name}' has no version {ref.version} (has {known})")
