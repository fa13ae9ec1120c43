"""Config versions in the store: add (content-hashed, immutable), list, resolve."""

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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        return data


@dataclass(frozen=True)
class AddConfigOutcome:
    version: ConfigVersionInfo
    created: bool


class ConfigsMixin(StoreBase):
    def add_config(
        self,
        name: str,
        searcher: str,
        params: dict[str, Any] | None = None,
        *,
        label: str | None = None,
    ) -> AddConfigOutcome:
        """Register a config version; identical searcher + params + label → the same version."""
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
            existing = session.scalar(
                select(ConfigVersion).where(
                    ConfigVersion.config_id == config.id, ConfigVersion.content_hash == digest
                )
            )
            if existing is not None:
                return AddConfigOutcome(_info(config, existing), created=False)
            latest = session.scalar(
                select(func.max(ConfigVersion.version)).where(ConfigVersion.config_id == config.id)
            )
            version = ConfigVersion(
                config_id=config.id,
                version=(latest or 0) + 1,
                content_hash=digest,
                searcher=searcher,
                params=params,
                label=label,
                created_at=utcnow(),
            )
            session.add(version)
            session.flush()
            return AddConfigOutcome(_info(config, version), created=True)

    def list_configs(self) -> list[ConfigVersionInfo]:
        """The latest version of every config, by name."""
        with self.session() as session:
            configs = session.scalars(select(Config).order_by(Config.name)).all()
            return [_info(c, c.versions[-1]) for c in configs if c.versions]

    def config_versions(self, name: str) -> list[ConfigVersionInfo]:
        with self.session() as session:
            config = _config(session, name)
            return [_info(config, v) for v in config.versions]

    def config_version(self, ref: str | VersionRef) -> ConfigVersionInfo:
        """Resolve ``NAME`` (latest) or ``NAME@VER``."""
        with self.session() as session:
            config, version = resolve_config_version(session, ref)
            return _info(config, version)


def resolve_config_version(session: Session, ref: str | VersionRef) -> tuple[Config, ConfigVersion]:
    parsed = parse_version_ref(ref, "config reference") if isinstance(ref, str) else ref
    config = _config(session, parsed.name)
    return config, pick_version(config.versions, parsed, "config")


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
    )
