"""When the nightly last ran each ``[[sweeps]]`` entry, kept in the options of the run its
winner was chosen with (``options["sweeps"]``: entry key → ISO time), so that no table is
needed: a sweep's settings are configs named ``CONFIG~...`` and their runs hold the record.

A setting chosen again by a later sweep is the same run (a sweep does not search a setting
twice), so the record is a map by entry and the latest time of an entry is the newest found
over the config's settings.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from evalplat.db.models import Config, ConfigVersion, Run
from evalplat.errors import NotFoundError
from evalplat.store.base import StoreBase, utcnow

OPTION = "sweeps"


class SweepRecordsMixin(StoreBase):
    def note_sweep(self, key: str, run_id: int, at: datetime | None = None) -> None:
        """Record that the sweep entry ``key`` ran at ``at`` (now), choosing run ``run_id``."""
        with self.session() as session:
            run = session.get(Run, run_id)
            if run is None:
                raise NotFoundError(f"run {run_id} not found")
            options = dict(run.options or {})
            record = dict(options.get(OPTION) or {})
            record[key] = (at or utcnow()).isoformat()
            options[OPTION] = record
            run.options = options

    def last_sweep(self, config: str, key: str) -> datetime | None:
        """When the sweep entry ``key`` of ``config`` last ran, if ever."""
        with self.session() as session:
            rows = session.scalars(
                select(Run.options)
                .join(ConfigVersion, ConfigVersion.id == Run.config_version_id)
                .join(Config, Config.id == ConfigVersion.config_id)
                .where(Config.name.startswith(f"{config}~", autoescape=True))
                .where(Run.options.is_not(None))
            ).all()
        times = [
            datetime.fromisoformat(options[OPTION][key])
            for options in rows
            if isinstance(options, dict)
            and isinstance(options.get(OPTION), dict)
            and key in options[OPTION]
        ]
        return max(times, default=None)
