"""The review loop: a judge's grades go out to people as CSV, and come back as their own grades.

``export_grades`` lists every grade of ``source = "llm:<judge>"`` in a test set version, one row
per pair, in the columns of ``evalplat unjudged`` (``query_id, query, doc_id``; no ``rank``, as
no run is involved) plus:

- ``grade``: the judge's grade, for the reviewer to keep (confirm) or overwrite (correct);
- ``source``: the reviewer's source (``review`` by default), so the grade comes back as a
  person's, never as the model's;
- ``judge_grade`` and ``rationale``: what the judge said and why (from its ledger), for
  reading; an import reads past them.

``add_judgments`` puts the file back: ``evalplat testset import NAME --qrels reviewed.csv
--add`` stores a new version with every judgment of the latest one plus the reviewed grades (a
pair's grade from the same source is replaced, a grade from another source is a second rater:
migration 0003). The model's grade stays beside the person's, so ``evalplat judge calibrate``
measures agreement against the ``review`` source as people go on reviewing, and comparisons
take the person's grade over the model's (``evalplat.comparison.model_views``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.judging.prompts import text_hash
from evalplat.testsets.raters import is_model_source

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent

EXPORT_COLUMNS = ("query_id", "query", "doc_id", "grade", "source", "judge_grade", "rationale")
REVIEW_SOURCE = "review"


def export_grades(
    store: Store, judge: str, testset: str, *, source: str = REVIEW_SOURCE
) -> pd.DataFrame:
    """The judge's grades in ``testset`` (``NAME[@VER]``) with their rationale (module doc),
    by query then document."""
    import pandas as pd

    from evalplat.inputs.validation import check_source

    check_source(source)
    if is_model_source(source):
        raise InputError(f"--source {source!r}: a reviewer's source cannot look like a model's")
    content = store.load_test_set(testset)
    judgments = content.judgments
    ours = judgments[judgments["source"].astype(object) == f"llm:{judge}"]
    ours = ours.sort_values(["query_id", "doc_id"], kind="stable")
    texts = dict(zip(content.queries["query_id"], content.queries["text"], strict=True))
    documents = _document_texts(content)
    reasons = store.judge_rationales(judge)
    rows = []
    for query_id, doc_id, grade in zip(
        ours["query_id"], ours["doc_id"], ours["grade"], strict=True
    ):
        query = str(texts.get(query_id) or "")
        title, text = documents.get(str(doc_id), ("", ""))
        key = (text_hash(query), text_hash(f"{title}\n{text}"))
        rows.append(
            (query_id, query, doc_id, int(grade), source, int(grade), reasons.get(key) or "")
        )
    return pd.DataFrame(rows, columns=list(EXPORT_COLUMNS))


def add_judgments(
    base: TestSetContent,
    added: pd.DataFrame,
    rule: str | None,
    *,
    path: str | Path | None = None,
    line_of: Callable[[int], int] | None = None,
) -> TestSetContent:
    """``base`` with the judgments ``added`` (``query_id, doc_id, grade, source``): a pair
    graded again by the same source takes the new grade; pairs of queries the test set does not
    have are refused, naming ``path`` and the line (``line_of(row)``) of the first."""
    import pandas as pd

    from evalplat.testsets.content import TestSetContent

    known = set(base.queries["query_id"].astype(str))
    strangers = ~added["query_id"].astype(str).isin(known)
    if strangers.any():
        row = int(strangers.to_numpy().argmax())
        more = added.loc[strangers, "query_id"].nunique() - 1
        others = f" (nor are {more} other queries of the file)" if more else ""
        raise InputError(
            f"query {str(added['query_id'].iloc[row])!r} is not in the test set{others}: --add "
            "only grades documents of the test set's own queries",
            path=path,
            line=None if line_of is None else line_of(row),
        )
    keys = ["query_id", "doc_id", "_source"]
    old = base.judgments.assign(_source=base.judgments["source"].astype(object).fillna(""))
    new = added.assign(_source=added["source"].astype(object).fillna(""))
    kept = old.merge(new[keys].assign(_new=True), how="left", on=keys)
    kept = kept[kept["_new"].isna()].drop(columns=["_new"])
    judgments = pd.concat([kept, new], ignore_index=True).drop(columns="_source")
    judgments["source"] = (
        judgments["source"].astype(object).where(judgments["source"].notna(), None)
    )
    return TestSetContent(
        queries=base.queries,
        judgments=judgments.astype({"grade": "int64"}).reset_index(drop=True),
        documents=base.documents,
        grade_rule=rule or base.grade_rule,
    )


def _document_texts(content: TestSetContent) -> dict[str, tuple[str, str]]:
    frame = content.documents
    if frame is None:
        return {}
    return {
        str(d): (str(t or ""), str(x or ""))
        for d, t, x in zip(frame["doc_id"], frame["title"], frame["text"], strict=True)
    }
