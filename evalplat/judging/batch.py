"""Asking a judge about many pairs: the cache first, then bounded concurrency, a budget of
requests and a time limit, with every answer committed as it arrives.

Order of work, so that a failure leaves nothing half done:

1. every pair's prompt is rendered before anything is sent (a template that fails stops the
   command with nothing sent and nothing written);
2. pairs already in the judge's ledger (same judge, prompt hash, query text and document text)
   are answered from it, and two pairs with the same texts are asked once;
3. at most ``concurrency`` requests are in flight; each answer is parsed strictly and committed
   to the ledger at once, a grade or a recorded failure;
4. the budget being spent or the time limit passing stops new requests (``stopped`` says
   which); an endpoint that cannot be used stops them too and is raised once the requests in
   flight have been recorded. Whatever was recorded stays: the next command asks only for the
   rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalplat.judging.answers import parse_answer
from evalplat.judging.client import (
    BudgetSpent,
    ChatClient,
    Completion,
    JudgeUnavailableError,
    RequestBudget,
    TransientJudgeError,
)
from evalplat.judging.prompts import text_hash
from evalplat.store.judge_grades import LedgerEntry

if TYPE_CHECKING:
    from evalplat.judging.prompts import Prompt
    from evalplat.judging.spec import JudgeSpec
    from evalplat.store import Store


@dataclass(frozen=True)
class Pair:
    """A (query, document) pair with the texts the judge reads."""

    query_id: str
    doc_id: str
    query: str
    title: str
    text: str

    @property
    def key(self) -> tuple[str, str]:
        return text_hash(self.query), text_hash(f"{self.title}\n{self.text}")


@dataclass
class Tally:
    """What one command did: pairs answered from the cache, asked, failed; requests and
    tokens spent; why it stopped early, if it did."""

    pairs: int = 0
    cached: int = 0
    asked: int = 0
    failed: int = 0
    no_text: int = 0
    left: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    stopped: str | None = None
    structured: bool = True
    answer_format: str = "json_schema"  # as the endpoint accepted it (judging.client)
    entries: dict[tuple[str, str], LedgerEntry] = field(default_factory=dict)

    def grade_of(self, pair: Pair) -> LedgerEntry | None:
        return self.entries.get(pair.key)


def judge_pairs(
    store: Store,
    spec: JudgeSpec,
    prompt: Prompt,
    pairs: Sequence[Pair],
    *,
    budget: RequestBudget | None = None,
    time_limit: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> Tally:
    """Grades for ``pairs`` (module doc); ``Tally.entries`` holds them by text key."""
    budget = budget or RequestBudget(spec.budget)
    limit = time_limit if time_limit is not None else spec.time_limit
    tally = Tally(pairs=len(pairs))
    with_text = [p for p in pairs if p.text.strip() or p.title.strip()]
    tally.no_text = len(pairs) - len(with_text)
    ledger = store.judge_ledger(spec.name, prompt.hash)
    wanted: dict[tuple[str, str], str] = {}
    for pair in with_text:
        key = pair.key
        if key in ledger:
            tally.entries[key] = ledger[key]
        elif key not in wanted:
            wanted[key] = prompt.render(pair.query, pair.title, pair.text, spec.scale)
    tally.cached = sum(1 for p in with_text if p.key in ledger)
    if not wanted:
        return tally
    client = ChatClient(spec, budget)
    deadline = None if limit is None else time.monotonic() + limit
    stop = threading.Event()
    reasons: list[str] = []
    failures: list[Exception] = []

    def ask(user: str) -> Completion | None:
        if stop.is_set():
            return None
        if deadline is not None and time.monotonic() >= deadline:
            reasons.append(f"the time limit of {limit:g} s passed")
            stop.set()
            return None
        try:
            return client.complete(user)
        except BudgetSpent as error:
            reasons.append(str(error))
            stop.set()
        except TransientJudgeError as error:
            failures.append(
                JudgeUnavailableError(f"{error} (gave up after {spec.retries} retries)")
            )
            stop.set()
        except JudgeUnavailableError as error:
            failures.append(error)
            stop.set()
        return None

    try:
        with ThreadPoolExecutor(max_workers=spec.concurrency) as pool:
            futures: dict[Future[Completion | None], tuple[str, str]] = {
                pool.submit(ask, user): key for key, user in wanted.items()
            }
            for future in as_completed(futures):
                completion = future.result()
                if completion is None:
                    tally.left += 1
                    continue
                entry = _entry(futures[future], completion, spec)
                store.record_judge_grade(spec.name, prompt.hash, entry)
                tally.entries[entry.query_hash, entry.doc_hash] = entry
                tally.asked += 1
                tally.failed += entry.grade is None
                tally.prompt_tokens += completion.prompt_tokens or 0
                tally.completion_tokens += completion.completion_tokens or 0
                if progress is not None:
                    progress(1)
    finally:
        tally.requests = budget.sent
        tally.structured = client.structured
        tally.answer_format = client.answer_format
        client.close()
    if failures:
        raise failures[0]
    tally.stopped = reasons[0] if reasons else None
    return tally


def _entry(key: tuple[str, str], completion: Completion, spec: JudgeSpec) -> LedgerEntry:
    parsed = parse_answer(completion.text, spec.scale)
    return LedgerEntry(
        query_hash=key[0],
        doc_hash=key[1],
        grade=parsed.grade,
        error=parsed.error,
        rationale=parsed.rationale,
        answer=completion.text[:2000],
        model=spec.model,
        temperature=spec.temperature,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
    )
