"""Paired timings in the store: the milliseconds of a sample of queries searched by the
baseline's config version and the candidate's one after the other in the same night
(``evalplat.running.paired_timing``), kept in the options of the candidate's run
(``options["paired_timings"]``: the baseline version's id → the timings), so that no table is
needed. A comparison of two runs reads them when they pair the two runs' config versions
(``evalplat.comparison.paired_latency``).
"""

from __future__ import annotations

from sqlalchemy import select

from evalplat.comparison.paired_latency import PairedTimings
from evalplat.db.models import Run
from evalplat.errors import NotFoundError
from evalplat.store.base import StoreBase

OPTION = "paired_timings"


class PairedTimingsMixin(StoreBase):
    def save_paired_timings(self, run_id: int, timings: PairedTimings) -> None:
        """Keep ``timings`` with the candidate's run ``run_id`` (replacing earlier timings
        against the same baseline version)."""
        with self.session() as session:
            run = session.get(Run, run_id)
            if run is None:
                raise NotFoundError(f"run {run_id} not found")
            if run.config_version_id != timings.candidate_version:
                raise ValueError("paired timings belong to the run of the candidate's version")
            options = dict(run.options or {})
            record = dict(options.get(OPTION) or {})
            record[str(timings.baseline_version)] = timings.to_dict()
            options[OPTION] = record
            run.options = options

    def paired_timings(self, baseline_run: int, candidate_run: int) -> PairedTimings | None:
        """The timings kept with ``candidate_run`` against ``baseline_run``'s config version,
        or None when the night took none (a comparison then does not gate latency)."""
        with self.session() as session:
            rows = session.execute(
                select(Run.id, Run.config_version_id, Run.options).where(
                    Run.id.in_([baseline_run, candidate_run])
                )
            ).all()
        found = {run_id: (version, options) for run_id, version, options in rows}
        if baseline_run not in found or candidate_run not in found:
            return None
        baseline_version = found[baseline_run][0]
        options = found[candidate_run][1]
        record = (options or {}).get(OPTION) if isinstance(options, dict) else None
        data = (record or {}).get(str(baseline_version))
        return None if data is None else PairedTimings.from_dict(data)
