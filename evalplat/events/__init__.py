"""Online events: interaction logs read, attributed to config versions, turned into measures.

``records`` reads UBI 1.x and flat JSONL/CSV logs; ``sessions`` cuts stored searches into
windows and sessions and scores the online measures (``evalplat.metrics.online``) over them.
The store (``evalplat.store.events``) keeps the records and the scores.
"""
