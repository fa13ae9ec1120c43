"""Simulated users and queries that differ from each other, as real traffic does.

:func:`evalplat.events.synthetic.session_ctr` and :func:`~evalplat.events.synthetic.
interleaved_outcomes` simulate searches by users of one cascade click model. Without a
:class:`Population` every user is alike and every query as frequent as any other. With one:

- **users differ**: each session is one user whose chance of clicking an examined hit is the
  model's attraction of its grade times the user's propensity, drawn from a Beta(``user_a``,
  ``user_b``) distribution rescaled to mean 1 (capped at a chance of 1). With the default
  Beta(0.6, 0.9) a user's multiplier spans 0 to 2.5 and about a fifth of users click at less
  than a fifth of the average rate: some users rarely click;
- **queries differ in frequency**: the query of a search is drawn with Zipf-like (head and
  tail) frequency, the r-th most frequent in proportion to 1 / r^``zipf``; which query holds
  rank r is a seeded shuffle, not the test set's order;
- **queries differ in difficulty**: each query's attraction is multiplied by a log-normal
  factor with median 1 whose logarithm has standard deviation ``difficulty``, the same for
  every user;
- **noise clicks**: an examined hit is clicked with at least probability ``noise`` whatever its
  grade (misclicks, clicks on snippets that look relevant and are not);
- **sessions differ in length** (optional): with ``single_search`` and ``mean_searches`` set,
  a session runs one search with probability ``single_search`` and otherwise 2 or more, one
  plus a geometric count whose mean makes the sessions' mean ``mean_searches``; without them a
  session runs 1 to ``max_searches`` searches, each as likely;
- **position bias** stays the cascade's (users scan top down and leave).

Both the A/B arms and an interleaved test draw their users and queries from the same
population. The default parameters are assumptions, stated in ``docs/online.md``, not fitted
figures; :meth:`Population.published` takes what published measurements of real logs give.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalplat.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@dataclass(frozen=True)
class Population:
    """How simulated users and queries differ (module doc); ``seed`` fixes the query side."""

    user_a: float = 0.6
    user_b: float = 0.9
    zipf: float = 1.0
    difficulty: float = 0.5
    noise: float = 0.02
    seed: int = 0
    single_search: float | None = None
    mean_searches: float | None = None

    def __post_init__(self) -> None:
        if self.user_a <= 0 or self.user_b <= 0:
            raise InputError("the users' Beta parameters must be above 0")
        if self.zipf < 0 or self.difficulty < 0:
            raise InputError("zipf and difficulty must be 0 or more")
        if not 0.0 <= self.noise <= 1.0:
            raise InputError("noise must be between 0 and 1")
        if (self.single_search is None) != (self.mean_searches is None):
            raise InputError("single_search and mean_searches go together")
        if self.single_search is not None and self.mean_searches is not None:
            if not 0.0 <= self.single_search < 1.0:
                raise InputError("single_search must be at least 0 and less than 1")
            if not 2.0 - self.single_search <= self.mean_searches < float("inf"):
                raise InputError("mean_searches must be at least 2 - single_search: a session "
                                 "of more than one search has at least two")  # fmt: skip

    @classmethod
    def published(cls, seed: int = 0) -> Population:
        """Users and queries with what published measurements of real search logs give, and
        the stated assumptions where none does (each source in ``docs/online.md``):

        - session length, **published**: 77 % of sessions run one query and a session runs
          2.02 queries on average (Silverstein, Henzinger, Marais & Moricz, "Analysis of a
          very large web search engine query log", SIGIR Forum 33(1), 1999: an AltaVista log
          of about 285 million sessions);
        - users' propensity Beta(0.6, 0.9), query difficulty 0.5, noise clicks 0.02:
          **assumptions** (no source found gives per-user click-rate spread, per-query
          spread or a misclick rate);
        - Zipf exponent 1: an **assumption**, the shape query logs are described by
          (rank times frequency constant), not a figure fitted to a log.

        The click model that goes with it (:data:`evalplat.events.synthetic.PUBLISHED_MODEL`)
        is fitted to published click figures."""
        return cls(user_a=0.6, user_b=0.9, zipf=1.0, difficulty=0.5, noise=0.02, seed=seed,
                   single_search=0.77, mean_searches=2.02)  # fmt: skip

    def session_lengths(
        self, sessions: int, max_searches: int, rng: np.random.Generator
    ) -> NDArray[np.int64]:
        """The number of searches of each session (module doc: 1 to ``max_searches`` each as
        likely, or, with ``single_search`` and ``mean_searches``, 1 or 2 and more)."""
        if self.single_search is None or self.mean_searches is None:
            return rng.integers(1, max_searches + 1, sessions)
        import numpy as np

        longer = (self.mean_searches - self.single_search) / (1.0 - self.single_search)
        extra = rng.geometric(1.0 / (longer - 1.0), sessions)  # 1, 2, ...: mean longer - 1
        counts: NDArray[np.int64] = np.where(rng.random(sessions) < self.single_search, 1,
                                             1 + extra).astype(np.int64)  # fmt: skip
        return counts

    def query_weights(self, queries: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(the chance that a search is for each query, each query's difficulty factor)."""
        import numpy as np

        rng = np.random.default_rng([self.seed, queries])
        frequency = 1.0 / np.arange(1, queries + 1) ** self.zipf
        chance = rng.permutation(frequency / frequency.sum())
        factor = np.exp(rng.normal(0.0, self.difficulty, queries))
        return chance, factor

    def searches(
        self, sessions: int, queries: int, max_searches: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """(session of each search, its query, the factor on its hits' attraction: the user's
        propensity times the query's difficulty factor); 1 to ``max_searches`` per session."""
        import numpy as np

        if sessions < 1 or max_searches < 1 or queries < 1:
            raise InputError("sessions, queries and max_searches must be 1 or more")
        chance, difficulty = self.query_weights(queries)
        counts = self.session_lengths(sessions, max_searches, rng)
        session = np.repeat(np.arange(sessions), counts)
        query = rng.choice(queries, size=session.size, p=chance)
        mean = self.user_a / (self.user_a + self.user_b)
        propensity = rng.beta(self.user_a, self.user_b, sessions) / mean
        return session, query, propensity[session] * difficulty[query]

    def attraction(
        self, attraction: NDArray[np.float64], factor: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """Per search (row) the click chance of each examined hit: the model's ``attraction``
        times the search's ``factor``, at most 1, at least ``noise`` where a hit is shown
        (positions without a hit have attraction 0 and stay 0)."""
        import numpy as np

        scaled = np.minimum(1.0, attraction * factor[:, None])
        shown = attraction > 0
        return np.where(shown, self.noise + (1.0 - self.noise) * scaled, 0.0)
