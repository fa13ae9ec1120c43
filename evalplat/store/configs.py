"""Config versions in the store: add (content-hashed, immutable), list, resolve.

A config's *current* version is one fact, stored on the config (``Config.current_version``)
and written by one writer, :func:`make_current`: the version last added or named again by its
content (``config add``, a night's project file, ``import-run``). Re-adding the content of an
earlier version makes that version current again (a rollback); it adds no version. ``NAME`` and
``NAME@latest`` name the current version everywhere, whatever the highest number is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.db.models import Config, ConfigVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.searchers.configs import content_hash
from evalplat.store.base import StoreBase, claim_name, utcnow
from evalplat.store.refs import (
    VersionRef,
    check_label,
    check_name,
    parse_version_ref,
    pick_version,
)


@dataclass(frozen=True)
class ConfigVersionInfo:
    name: str
    version: int
    searcher: str
    params: dict[str, Any]
    label: str | None
    content_hash: str
    created_at: datetime
    current: bool  # the version the config's name stands for

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        return data


@dataclass(frozen=True)
class AddConfigOutcome:
    version: ConfigVersionInfo
    created: bool
    # the version that was current before, when the add made another one current (a new
    # version, or an earlier one again: a rollback)
    replaced: int | None = None


class ConfigsMixin(StoreBase):
    def add_config(
        self,
        name: str,
        searcher: str,
        params: dict[str, Any] | None = None,
        *,
        label: str | None = None,
    ) -> AddConfigOutcome:
        """Register a config version and make it current; identical searcher + params + label
        → the same version, current again (a rollback to an earlier content adds nothing)."""
        check_name(name, "config")
        if label is not None:
            check_label(label)
        params = _checked_params(searcher, dict(params or {}))
        try:
            digest = content_hash(searcher, params, label)
        except (TypeError, ValueError) as error:
            raise InputError(f"config parameters are not plain data: {error}") from None
        with self.session(write=True) as session:
            config = claim_name(session, Config, name)
            before = config.current_version
            existing = session.scalar(
                select(ConfigVersion).where(
                    ConfigVersion.config_id == config.id, ConfigVersion.content_hash == digest
                )
            )
            created = existing is None
            version = existing or new_config_version(session, config, digest, searcher, params,
                                                     label)  # fmt: skip
            make_current(config, version)
            replaced = before if before is not None and before != version.version else None
            return AddConfigOutcome(_info(config, version), created=created, replaced=replaced)

    def list_configs(self) -> list[ConfigVersionInfo]:
        """The current version of every config, by name."""
        with self.session() as session:
            configs = session.scalars(select(Config).order_by(Config.name)).all()
            return [_info(c, current_version(c)) for c in configs if c.versions]

    def config_versions(self, name: str) -> list[ConfigVersionInfo]:
        with self.session() as session:
            config = _config(session, name)
            return [_info(config, v) for v in config.versions]

    def config_version(self, ref: str | VersionRef) -> ConfigVersionInfo:
        """Resolve ``NAME`` or ``NAME@latest`` (the current version) or ``NAME@VER``."""
        with self.session() as session:
            config, version = resolve_config_version(session, ref)
            return _info(config, version)


def resolve_config_version(session: Session, ref: str | VersionRef) -> tuple[Config, ConfigVersion]:
    """``NAME`` and ``NAME@latest`` → the config's current version; ``NAME@VER`` → that one."""
    parsed = parse_version_ref(ref, "config reference") if isinstance(ref, str) else ref
    config = _config(session, parsed.name)
    if parsed.version is None:
        return config, current_version(config)
    return config, pick_version(config.versions, parsed, "config")


def current_version(config: Config) -> ConfigVersion:
    """The version the config's name stands for (``Config.current_version``)."""
    for version in config.versions:
        if version.version == config.current_version:
            return version
    raise NotFoundError(f"config '{config.name}' has no versions")


def new_config_version(
    session: Session,
    config: Config,
    digest: str,
    searcher: str,
    params: dict[str, Any],
    label: str | None,
) -> ConfigVersion:
    """The one writer of config versions: numbered one past the config's highest, so a number
    is never given twice. The caller makes it current (:func:`make_current`) when it is."""
    highest = session.scalar(
        select(func.max(ConfigVersion.version)).where(ConfigVersion.config_id == config.id)
    )
    version = ConfigVersion(
        config=config,  # joins ``config.versions`` too
        version=(highest or 0) + 1,
        content_hash=digest,
        searcher=searcher,
        params=params,
        label=label,
        created_at=utcnow(),
    )
    session.add(version)
    session.flush()
    return version


def make_current(config: Config, version: ConfigVersion) -> None:
    """The one writer of a config's current version."""
    config.current_version = version.version


def _config(session: Session, name: str) -> Config:
    config = session.scalar(select(Config).where(Config.name == name))
    if config is None:
        names = session.scalars(select(Config.name).order_by(Config.name)).all()
        hint = f"; known: {', '.join(names)}" if names else "; add one with `config add`"
        raise NotFoundError(f"no config named '{name}'{hint}")
    return config


def _checked_params(searcher: str, params: dict[str, Any]) -> dict[str, Any]:
    """Refuse unknown searcher kinds and params; keep the given params, converted to their types.

    Defaults are not filled in, so a config's hash does not change when a default does.
    """
    from evalplat.searchers import validate_config

    validated = validate_config(searcher, params)
    return {name: validated[name] for name in params}


def _info(config: Config, version: ConfigVersion) -> ConfigVersionInfo:
    return ConfigVersionInfo(
        name=config.name,
        version=version.version,
        searcher=version.searcher,
        params=version.params,
        label=version.label,
        content_hash=version.content_hash,
        created_at=version.created_at,
        current=version.version == config.current_version,
    )
