"""The whole schema, loaded: ``METADATA`` holds every table, for migrations and for the tests
that compare, count or empty them.

Each table group has its module (``evalplat.db.models`` and its neighbours); a table is in
``Base.metadata`` only once its module is imported, so whatever needs every table reads
``METADATA`` from here rather than ``Base.metadata`` from wherever it happens to be.
"""

from __future__ import annotations

from sqlalchemy import MetaData

from evalplat.db import evaluations, events, judge_grades, models, operations, rating
from evalplat.db.schema import Base

TABLE_MODULES = (models, evaluations, operations, events, rating, judge_grades)
METADATA: MetaData = Base.metadata
