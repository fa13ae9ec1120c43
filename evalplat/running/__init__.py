"""Running a config over a test set and keeping its scores true.

- ``runner``: ``run``, ``resume``, ``rescore`` and ``import_run``, the entry points;
- ``search_driver``: searching a run's queries with retries, batching commits, finishing the run;
- ``ranked_file``: a TREC run file read and ranked once, for ``import_run`` to store and score;
- ``rescoring``: runs scored again when their test set gains judgments.

The zero-result flag of a run is a measure of its records (``evalplat.metrics.run_health``).
The retry and backoff policy of one search call lives with the searchers
(``evalplat.searchers.retry``), since every searcher kind shares it.
"""
