"""Running a config over a test set and keeping its scores true.

- ``runner``: ``run``, ``resume``, ``rescore`` and ``import_run``, the entry points;
- ``search_driver``: searching a run's queries with retries, batching commits, finishing the run;
- ``health``: the zero-result rate and when a run is flagged for it;
- ``rescoring``: runs scored again when their test set gains judgments.

The retry and backoff policy of one search call lives with the searchers
(``evalplat.searchers.retry``), since every searcher kind shares it.
"""
