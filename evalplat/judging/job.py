"""``evalplat judge`` and ``evalplat judge calibrate``: which pairs, and what is written.

``judge_unjudged`` takes the top-``k`` documents of the given runs that the test set version
does not judge, asks the judge about them (``evalplat.judging.batch``), and stores a new version
of the test set: the old judgments plus one grade per answered pair with ``source =
"llm:<judge>"``. The version's ``source`` records the provenance (judge, model, prompt hash,
temperature, date, token counts); each grade's own answer, rationale and tokens stay in the
judge's ledger. Pairs whose answer held no grade are left out and counted as ``failed``.

A command stopped by its budget or time limit still stores the grades it has (and says how many
pairs are left); an endpoint that cannot be used stops it with nothing stored but the ledger, so
the next command picks up where it stopped.

``calibrate`` asks the judge about pairs people already graded (a seeded sample) and measures
agreement (``evalplat.judging.calibration``); nothing is added to the test set. The result is
kept in the store: gates that let model grades in read the latest one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.validation import DEPTH_MAX, ROW_ID_MAX, check_number
from evalplat.judging.batch import Pair, Tally, judge_pairs
from evalplat.judging.calibration import Calibration, agreement, gating_refusal
from evalplat.judging.client import RequestBudget
from evalplat.judging.prompts import SYSTEM
from evalplat.judging.what_if import RECENT, what_if
from evalplat.store.base import utcnow
from evalplat.testsets.raters import is_model_source

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.judging.prompts import Prompt
    from evalplat.judging.spec import JudgeSpec
    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent

# Characters per token for the dry run's estimate, and the tokens an answer takes.
_CHARS_PER_TOKEN = 4
_ANSWER_TOKENS = 40
# numpy's seeds, as ``compare --seed`` takes them
SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class JudgeOutcome:
    judge: str
    testset: str
    version: int | None  # the version written; None for a dry run or when nothing was added
    created: bool
    added: int
    tally: Tally
    dry_run: bool = False
    estimated_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        t = self.tally
        return {
            "judge": self.judge,
            "testset": self.testset,
            "version": self.version,
            "created": self.created,
            "dry_run": self.dry_run,
            "pairs": t.pairs,
            "added": self.added,
            "cached": t.cached,
            "asked": t.asked,
            "failed": t.failed,
            "no_text": t.no_text,
            "left": t.left,
            "requests": t.requests,
            "prompt_tokens": t.prompt_tokens,
            "completion_tokens": t.completion_tokens,
            "estimated_tokens": self.estimated_tokens,
            "structured": t.structured,
            "answer_format": t.answer_format,
            "stopped": t.stopped,
        }


def unjudged_pairs(
    store: Store, testset: str, runs: list[str], k: int, limit: int | None
) -> tuple[TestSetContent, list[Pair]]:
    """The top-``k`` documents of ``runs`` without a judgment in ``testset``, first ``limit``."""
    if not runs:
        raise InputError("name the runs whose unjudged documents to judge: --unjudged-of RUN")
    check_number(k, "--k", minimum=1, maximum=DEPTH_MAX)
    if limit is not None:
        check_number(limit, "--limit", minimum=0, maximum=ROW_ID_MAX)
    content = store.load_test_set(testset)
    judged = set(zip(content.judgments["query_id"], content.judgments["doc_id"], strict=True))
    queries = dict(zip(content.queries["query_id"], content.queries["text"], strict=True))
    seen: set[tuple[str, str]] = set()
    wanted: list[tuple[str, str]] = []
    fetched: dict[str, tuple[str, str]] = {}
    for run in runs:
        frame = store.unjudged(run, k)
        for query_id, doc_id in zip(frame["query_id"], frame["doc_id"], strict=True):
            pair = (str(query_id), str(doc_id))
            if pair not in judged and pair not in seen and pair[0] in queries:
                seen.add(pair)
                wanted.append(pair)
        if content.documents is None:
            fetched |= _hit_texts(store, run, fetched)
    if limit is not None:
        wanted = wanted[:limit]
    return content, _with_texts(content, wanted, fetched)


def _hit_texts(
    store: Store, run: str, known: dict[str, tuple[str, str]]
) -> dict[str, tuple[str, str]]:
    """``title`` and ``text`` of the documents as the run's searcher returned them
    (``hit_fields`` of an ``http`` config, stored with each result), for a test set that stores
    no documents; documents already in ``known`` keep their text."""
    fields = store.result_fields(run, ["title", "text"])
    texts: dict[str, dict[str, str]] = {}
    for doc_id, field, value in zip(
        fields["doc_id"], fields["field"], fields["value"], strict=True
    ):
        if str(doc_id) not in known and value is not None:
            texts.setdefault(str(doc_id), {}).setdefault(str(field), str(value))
    return {d: (found.get("title", ""), found.get("text", "")) for d, found in texts.items()}


def judge_unjudged(
    store: Store,
    spec: JudgeSpec,
    prompt: Prompt,
    testset: str,
    runs: list[str],
    *,
    k: int = 10,
    limit: int | None = None,
    dry_run: bool = False,
    budget: RequestBudget | None = None,
) -> JudgeOutcome:
    """Judge the unjudged pairs of ``runs`` and store a new version (module doc). ``budget``
    (default: the judge's own per command) may be shared by several calls, e.g. one night."""
    version = store.test_set_version(testset)
    content, pairs = unjudged_pairs(store, testset, runs, k, limit)
    if dry_run:
        return _dry_run(store, spec, prompt, version.name, pairs)
    tally = judge_pairs(store, spec, prompt, pairs, budget=budget)
    rows = [
        (p.query_id, p.doc_id, entry.grade, spec.source)
        for p in pairs
        if (entry := tally.grade_of(p)) is not None and entry.grade is not None
    ]
    if not rows:
        return JudgeOutcome(spec.name, version.name, None, False, 0, tally)
    import pandas as pd

    from evalplat.testsets.content import TestSetContent

    added = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade", "source"])
    judgments = pd.concat([content.judgments, added.astype({"grade": "int64"})], ignore_index=True)
    provenance = {
        "kind": "judge",
        "judge": spec.name,
        "model": spec.model,
        "prompt_hash": prompt.hash,
        "temperature": spec.temperature,
        "date": utcnow().isoformat(timespec="seconds"),
        "from_version": version.version,
        "pairs": len(rows),
        "prompt_tokens": tally.prompt_tokens,
        "completion_tokens": tally.completion_tokens,
    }
    outcome = store.import_test_set(
        version.name,
        TestSetContent(
            queries=content.queries,
            judgments=judgments,
            documents=content.documents,
            grade_rule=content.grade_rule,
        ),
        source=provenance,
        parent=version.version,
    )
    return JudgeOutcome(
        spec.name, version.name, outcome.version.version, outcome.created, len(rows), tally
    )


def calibrate(
    store: Store,
    spec: JudgeSpec,
    prompt: Prompt,
    testset: str,
    *,
    sample: int = 100,
    seed: int = 0,
    comparisons: int = RECENT,
) -> tuple[Calibration, Tally]:
    """Ask the judge about a seeded sample of pairs people graded; agreement per source, and
    the ``comparisons`` most recent comparisons on the test set replayed with the judge's
    grades (``evalplat.judging.what_if``)."""
    import numpy as np
    import pandas as pd

    check_number(sample, "--sample", minimum=1, maximum=ROW_ID_MAX)
    check_number(seed, "--seed", minimum=0, maximum=SEED_MAX)
    check_number(comparisons, "--comparisons", minimum=0, maximum=ROW_ID_MAX)
    content = store.load_test_set(testset)
    judgments = content.judgments.assign(source=content.judgments["source"].fillna("-").astype(str))
    human = judgments[~judgments["source"].map(is_model_source).astype(bool)]
    keys = list(dict.fromkeys(zip(human["query_id"], human["doc_id"], strict=True)))
    if len(keys) > sample:
        chosen = np.random.default_rng(seed).choice(len(keys), size=sample, replace=False)
        keys = [keys[i] for i in sorted(chosen)]
    pairs = _with_texts(content, keys)
    tally = judge_pairs(store, spec, prompt, pairs)
    model = {
        (p.query_id, p.doc_id): entry.grade
        for p in pairs
        if (entry := tally.grade_of(p)) is not None and entry.grade is not None
    }
    graded = pd.DataFrame(
        [(q, d, g) for (q, d), g in model.items()], columns=["query_id", "doc_id", "judge"]
    )
    both = human.rename(columns={"grade": "human"}).merge(graded, on=["query_id", "doc_id"])
    sources = agreement(both, spec.scale)
    refusal = gating_refusal(sources, spec.min_kappa)
    failed = sum(1 for p in pairs if (e := tally.grade_of(p)) is not None and e.grade is None)
    result = Calibration(
        judge=spec.name,
        model=spec.model,
        prompt_hash=prompt.hash,
        scale=spec.scale,
        floor=spec.min_kappa,
        sampled=len(pairs),
        failed=failed,
        sources=sources,
        gating=refusal is None,
        refusal=refusal,
        what_if=tuple(what_if(store, testset, graded, limit=comparisons))
        if comparisons and len(graded)
        else (),
    )
    store.record_calibration(result.to_dict(), testset)
    return result, tally


def _with_texts(
    content: TestSetContent,
    keys: list[tuple[str, str]],
    fetched: dict[str, tuple[str, str]] | None = None,
) -> list[Pair]:
    if content.documents is None and not fetched:
        raise InputError(
            "the test set stores no documents, and a judge needs their text: import it with "
            "--docs, or have the run's searcher return title and text (hit_fields)"
        )
    documents = fetched or {}
    if content.documents is not None:
        documents = documents | _documents(content.documents)
    queries = dict(zip(content.queries["query_id"], content.queries["text"], strict=True))
    return [Pair(q, d, str(queries.get(q) or ""), *documents.get(d, ("", ""))) for q, d in keys]


def _documents(frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
    return {
        str(d): (str(t or ""), str(x or ""))
        for d, t, x in zip(frame["doc_id"], frame["title"], frame["text"], strict=True)
    }


def _dry_run(
    store: Store, spec: JudgeSpec, prompt: Prompt, name: str, pairs: list[Pair]
) -> JudgeOutcome:
    ledger = store.judge_ledger(spec.name, prompt.hash)
    tally = Tally(pairs=len(pairs))
    characters = 0
    asked: set[tuple[str, str]] = set()
    for pair in pairs:
        if not (pair.text.strip() or pair.title.strip()):
            tally.no_text += 1
        elif pair.key in ledger:
            tally.cached += 1
        elif pair.key not in asked:
            asked.add(pair.key)
            user = prompt.render(pair.query, pair.title, pair.text, spec.scale)
            characters += len(SYSTEM) + len(user)
    tally.left = len(asked)
    estimate = characters // _CHARS_PER_TOKEN + _ANSWER_TOKENS * len(asked)
    return JudgeOutcome(spec.name, name, None, False, 0, tally, True, estimate)
