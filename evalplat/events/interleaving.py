"""Interleaving: two rankers' results merged into one list, clicks credited to the rankers.

An A/B test shows each user one ranker and compares the arms' click-through; interleaving shows
every user both, merged into one list per search, and credits each click to the ranker that
contributed the clicked document. Every search is then a small paired comparison, which is why
interleaving finds the better ranker with far fewer sessions (Chapelle, Joachims, Radlinski &
Yue, "Large-scale validation and analysis of interleaved search evaluation", ACM TOIS 30(1),
2012). Pure computation: no database, no network.

Methods (``method=``):

- ``team_draft`` (Radlinski, Kurup & Joachims, CIKM 2008): in each round a fair coin says which
  ranker picks first; each then adds its highest-ranked document not yet in the list, and that
  document joins the picking ranker's team. A ranker with fewer picks than the other always
  picks next, so in every prefix the two teams differ by at most one while both rankers still
  have documents to give. When one ranker has nothing new left, the other fills the list.
  Credit (:func:`credit`): the team with more clicked documents wins the search.
- ``balanced`` (Joachims, "Evaluating retrieval quality using clickthrough data", 2003): one coin
  per search says which ranker leads; the list is then A's and B's rankings walked in lockstep
  (the ranker that has given fewer of its own ranks goes next, ties to the leader), each
  document added the first time either ranking reaches it. Credit (:func:`credit_balanced`):
  with ``l`` the lowest clicked position and ``k`` the best rank of that document in either
  ranking, ``h_a`` (``h_b``) counts the clicked documents in A's (B's) top ``k``; the larger
  wins. It needs each hit's rank in both rankings, which :meth:`Interleaving.as_ubi` writes.

A document both rankings hold appears once: team draft gives it to the ranker that picked it
first, balanced interleaving credits it from its ranks in both. A ranking holding a document
twice is an input error, as for every ranking of evalplat.

**Sign convention**: a :class:`Preference`'s ``delta`` is positive when ranker A (the first
ranking, ``names[0]``) is preferred and negative when B is.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalplat.errors import InputError
from evalplat.inputs.validation import check_number

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Outcome = Literal["a", "b", "tie"]
METHODS = ("team_draft", "balanced")
OUTCOMES: tuple[Outcome, ...] = ("a", "b", "tie")


@dataclass(frozen=True)
class Interleaving:
    """One interleaved search: the merged list, best first, and who contributed each hit.

    ``ranks[0][i]`` (``ranks[1][i]``) is the 1-based rank of hit i in ranking A's (B's) own
    list, None where that ranking does not hold it."""

    hit_ids: tuple[str, ...]
    teams: tuple[str, ...]
    method: str
    names: tuple[str, str] = ("a", "b")
    ranks: tuple[tuple[int | None, ...], tuple[int | None, ...]] = ((), ())

    def as_ubi(self) -> dict[str, Any]:
        """The fields of a UBI query event for this search, as the importer reads them:
        ``{"query_response_hit_ids": [...], "query_attributes": {"interleaving": method,
        "teams": [...], "rankers": [name_a, name_b]}}`` (the rankers name the experiment when
        one of them returned nothing and every hit is the other's); for ``balanced`` also
        ``"ranks": {name_a: [...], name_b: [...]}`` (1-based ranks in each ranker's own list,
        None where absent)."""
        attributes: dict[str, Any] = {"interleaving": self.method, "teams": list(self.teams),
                                      "rankers": list(self.names)}  # fmt: skip
        if self.method == "balanced":
            attributes["ranks"] = {self.names[0]: list(self.ranks[0]),
                                   self.names[1]: list(self.ranks[1])}  # fmt: skip
        return {"query_response_hit_ids": list(self.hit_ids), "query_attributes": attributes}


def interleave(
    ranking_a: Sequence[str],
    ranking_b: Sequence[str],
    *,
    method: str = "team_draft",
    seed: int | None = None,
    depth: int | None = None,
    names: tuple[str, str] = ("a", "b"),
    coins: int | None = None,
) -> Interleaving:
    """Merge two rankings (doc ids, best first) into one list of at most ``depth`` hits (both
    rankings' distinct documents without it), by ``method`` (module doc). The same ``seed``
    gives the same list; ``seed=None`` draws a fresh one. ``names`` are written as they are into
    ``teams`` (``("prod@3", "cand@1")``); ranking A is ``names[0]``.

    ``coins`` replaces the seeded coin flips by the bits of an integer (bit r decides round r
    of team draft, bit 0 the leader of balanced interleaving; 1 = B first): the values 0 to
    2**rounds - 1 give every interleaving of the two rankings, each as likely as the coin makes
    it (:func:`rounds`)."""
    if method not in METHODS:
        raise InputError(f"unknown interleaving method {method!r} (methods: {', '.join(METHODS)})")
    if len(names) != 2 or names[0] == names[1] or not all(names):
        raise InputError(f"interleaving needs two different, non-empty names, got {names!r}")
    a, b = _ranking(ranking_a, names[0]), _ranking(ranking_b, names[1])
    if depth is not None:
        check_number(depth, "depth", minimum=1)
    if coins is not None:
        check_number(coins, "coins", minimum=0)
    limit = len(set(a) | set(b)) if depth is None else min(depth, len(set(a) | set(b)))
    rnd = random.Random(seed)
    flip = (lambda r: rnd.randint(0, 1)) if coins is None else (lambda r: (coins >> r) & 1)
    merge = _team_draft if method == "team_draft" else _balanced
    hits, sides = merge(a, b, limit, flip)
    rank_a = {doc: i for i, doc in enumerate(a, start=1)}
    rank_b = {doc: i for i, doc in enumerate(b, start=1)}
    return Interleaving(
        hit_ids=tuple(hits),
        teams=tuple(names[side] for side in sides),
        method=method,
        names=(names[0], names[1]),
        ranks=(tuple(rank_a.get(d) for d in hits), tuple(rank_b.get(d) for d in hits)),
    )


def _ranking(ranking: Sequence[str], name: str) -> list[str]:
    if isinstance(ranking, str):
        raise InputError(f"ranking {name}: expected a sequence of doc ids, got a string")
    docs = [str(doc) for doc in ranking]
    if len(set(docs)) != len(docs):
        twice = next(doc for doc in docs if docs.count(doc) > 1)
        raise InputError(f"ranking {name}: doc id {twice!r} appears twice")
    return docs


def rounds(method: str, depth: int) -> int:
    """How many coin flips an interleaving of at most ``depth`` hits uses at most: one per
    round of two picks for team draft, one in all for balanced interleaving."""
    return (depth + 1) // 2 if method == "team_draft" else 1


def _team_draft(a: list[str], b: list[str], limit: int, flip: Callable[[int], int]
                ) -> tuple[list[str], list[int]]:  # fmt: skip
    hits: list[str] = []
    sides: list[int] = []
    seen: set[str] = set()
    picks = [0, 0]
    cursor = [0, 0]
    lists = (a, b)
    first = 0
    while len(hits) < limit:
        for side in (0, 1):  # skip what the other ranker already gave
            while cursor[side] < len(lists[side]) and lists[side][cursor[side]] in seen:
                cursor[side] += 1
        left = [cursor[side] < len(lists[side]) for side in (0, 1)]
        if picks[0] == picks[1]:
            first = flip(picks[0])  # a new round: the coin says who picks first
        side = first if picks[0] == picks[1] else int(picks[1] < picks[0])
        if not left[side]:
            side = 1 - side
        doc = lists[side][cursor[side]]
        hits.append(doc)
        sides.append(side)
        seen.add(doc)
        picks[side] += 1
    return hits, sides


def _balanced(a: list[str], b: list[str], limit: int, flip: Callable[[int], int]
              ) -> tuple[list[str], list[int]]:  # fmt: skip
    hits: list[str] = []
    sides: list[int] = []
    seen: set[str] = set()
    cursor = [0, 0]
    lists = (a, b)
    leader = flip(0)
    while len(hits) < limit:
        side = leader if cursor[0] == cursor[1] else int(cursor[1] < cursor[0])
        if cursor[side] >= len(lists[side]):
            side = 1 - side
        doc = lists[side][cursor[side]]
        cursor[side] += 1
        if doc not in seen:
            hits.append(doc)
            sides.append(side)
            seen.add(doc)
    return hits, sides


def credit(teams: Sequence[str | None], clicked: Iterable[int], *, a: str, b: str) -> Outcome:
    """Team-draft credit of one search: ``teams[i]`` is the team of position i (0-based),
    ``clicked`` the clicked positions; more clicked documents of ``a``'s team → ``"a"``, more of
    ``b``'s → ``"b"``, else ``"tie"`` (no clicks is a tie). A position clicked twice counts
    once; a position outside the list or of neither team counts for neither."""
    count = {a: 0, b: 0}
    for position in set(clicked):
        if 0 <= position < len(teams) and teams[position] in count:
            count[str(teams[position])] += 1
    return _winner(count[a], count[b])


def credit_balanced(
    ranks_a: Sequence[int | None], ranks_b: Sequence[int | None], clicked: Iterable[int]
) -> Outcome:
    """Balanced-interleaving credit of one search (Joachims 2003): ``ranks_a[i]``
    (``ranks_b[i]``) is the 1-based rank of the hit at position i (0-based) in ranking A's
    (B's) own list, None where absent; ``clicked`` the clicked positions. With ``l`` the lowest
    clicked position and ``k`` = min(rank of hit l in A, in B), ``h_a`` = clicked hits of rank
    ≤ k in A, ``h_b`` likewise in B; ``h_a > h_b`` → ``"a"``, ``h_b > h_a`` → ``"b"``, else
    ``"tie"``. Positions outside the list are ignored."""
    if len(ranks_a) != len(ranks_b):
        raise InputError(f"ranks of A ({len(ranks_a)}) and B ({len(ranks_b)}) differ in length")
    chosen = sorted(p for p in set(clicked) if 0 <= p < len(ranks_a))
    if not chosen:
        return "tie"
    lowest = chosen[-1]
    known = [r for r in (ranks_a[lowest], ranks_b[lowest]) if r is not None]
    if not known:
        raise InputError(f"hit at position {lowest} has a rank in neither ranking")
    k = min(known)
    h_a = sum(1 for p in chosen if (r := ranks_a[p]) is not None and r <= k)
    h_b = sum(1 for p in chosen if (r := ranks_b[p]) is not None and r <= k)
    return _winner(h_a, h_b)


def credit_many(sides: NDArray[np.int8], clicks: NDArray[np.bool_]) -> NDArray[np.int8]:
    """Team-draft credit of many searches at once: ``sides[s, i]`` is 0 when ranker A gave hit
    i of search s, 1 when B did, -1 for no hit; ``clicks[s, i]`` whether it was clicked. Per
    search +1 when A wins, -1 when B wins, 0 for a tie (as :func:`credit`)."""
    import numpy as np

    on_a = np.sum(clicks & (sides == 0), axis=1)
    on_b = np.sum(clicks & (sides == 1), axis=1)
    won: NDArray[np.int8] = np.sign(on_a - on_b).astype(np.int8)
    return won


def credit_balanced_many(
    ranks_a: NDArray[np.float64], ranks_b: NDArray[np.float64], clicks: NDArray[np.bool_]
) -> NDArray[np.int8]:
    """Balanced-interleaving credit of many searches at once: ``ranks_a[s, i]`` (``ranks_b``)
    is the rank in A (B) of hit i of search s, ``inf`` where absent (and where there is no
    hit); ``clicks[s, i]`` whether it was clicked. Per search +1 (A wins), -1 (B) or 0, as
    :func:`credit_balanced`."""
    import numpy as np

    depth = clicks.shape[1]
    lowest = depth - 1 - np.argmax(clicks[:, ::-1], axis=1)
    rows = np.arange(clicks.shape[0])
    k = np.minimum(ranks_a[rows, lowest], ranks_b[rows, lowest])[:, None]
    h_a = np.sum(clicks & (ranks_a <= k), axis=1)
    h_b = np.sum(clicks & (ranks_b <= k), axis=1)
    return np.where(clicks.any(axis=1), np.sign(h_a - h_b), 0).astype(np.int8)


def combine(outcomes: Iterable[Outcome]) -> Outcome:
    """One outcome for a unit of several searches (a session): the ranker that won more of its
    searches, a tie when they won as many."""
    outcomes = list(outcomes)
    _check_outcomes(outcomes)
    return _winner(outcomes.count("a"), outcomes.count("b"))


def _winner(a: int, b: int) -> Outcome:
    return "a" if a > b else "b" if b > a else "tie"


def _check_outcomes(outcomes: Sequence[str]) -> None:
    wrong = next((o for o in outcomes if o not in OUTCOMES), None)
    if wrong is not None:
        raise InputError(f"an outcome is 'a', 'b' or 'tie', got {wrong!r}")


@dataclass(frozen=True)
class Preference:
    """Which ranker users preferred over ``n`` units (searches or sessions, one outcome each).

    ``delta`` = (wins_a + ties/2)/n - 0.5, ΔAB of Chapelle et al. 2012: **positive when A is
    preferred**, negative when B is, in [-0.5, +0.5]. ``low``/``high``: the percentile bootstrap
    interval of ``delta`` over the units. ``p_value``: the two-sided exact binomial sign test of
    wins_a against wins_b over the decided units (ties left out; H0: each is won by A or B with
    probability 1/2, i.e. delta = 0); 1.0 when none is decided."""

    wins_a: int
    wins_b: int
    ties: int
    n: int
    delta: float
    low: float
    high: float
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        return {"wins_a": self.wins_a, "wins_b": self.wins_b, "ties": self.ties, "n": self.n,
                "delta": self.delta, "low": self.low, "high": self.high,
                "p_value": self.p_value}  # fmt: skip


def preference(
    outcomes: Sequence[Outcome],
    *,
    confidence: float = 0.95,
    draws: int = 10_000,
    seed: int = 0,
) -> Preference:
    """The preference of A over B (:class:`Preference`; positive delta = A preferred) from one
    outcome per unit. The bootstrap resamples the n units with replacement ``draws`` times,
    seeded: since an outcome is one of three values, a resample is fully described by its
    counts, drawn as one ``draws`` by 3 multinomial matrix (the same distribution as resampling
    the units one by one, at a cost independent of n)."""
    import numpy as np
    from scipy.stats import binomtest

    _check_outcomes(outcomes)
    check_number(confidence, "confidence", above=0.0)
    if confidence >= 1.0:
        raise InputError(f"confidence must be less than 1, got {confidence:g}")
    check_number(draws, "draws", minimum=1)
    n = len(outcomes)
    if n == 0:
        raise InputError("no interleaved outcomes to compute a preference from")
    wins_a, wins_b = outcomes.count("a"), outcomes.count("b")
    ties = n - wins_a - wins_b
    delta = (wins_a + ties / 2) / n - 0.5
    counts = np.random.default_rng(seed).multinomial(n, [wins_a / n, wins_b / n, ties / n], draws)
    resampled = (counts[:, 0] + counts[:, 2] / 2) / n - 0.5
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail])
    decided = wins_a + wins_b
    p = float(binomtest(wins_a, decided, 0.5).pvalue) if decided else 1.0
    return Preference(wins_a=wins_a, wins_b=wins_b, ties=ties, n=n, delta=float(delta),
                      low=float(low), high=float(high), p_value=min(p, 1.0))  # fmt: skip
