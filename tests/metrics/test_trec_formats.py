"""TREC qrels and run readers: the fast tiers agree with the reference pass, errors name lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evalplat.errors import InputError
from evalplat.formats import read_qrels, read_run
from evalplat.formats.trec import _QRELS_KEEP, _RUN_KEEP, QRELS_FIELDS, RUN_FIELDS, _read_slow

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


def _write(tmp_path: Path, text: str | bytes, name: str = "file.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_qrels_columns_and_types() -> None:
    qrels = read_qrels(DATA / "qrels.test")
    assert list(qrels.columns) == ["query_id", "doc_id", "grade"]
    assert len(qrels) == 3681
    assert str(qrels["grade"].dtype) == "int64"
    assert qrels.iloc[0].tolist() == ["301", "CR93E-10279", 0]


def test_qrels_keep_negative_grades() -> None:
    qrels = read_qrels(DATA / "edge.qrels")
    assert qrels.loc[qrels["doc_id"] == "c3", "grade"].tolist() == [-1]


def test_qrels_comment_lines_are_skipped() -> None:
    plain = read_qrels(DATA / "qrels.test")
    commented = read_qrels(DATA / "qrels.test.with-comments")
    assert len(commented) == len(plain)
    # the upstream file also changes one docno to carry a '#' mid-field
    changed = commented["doc_id"] != plain["doc_id"]
    assert commented.loc[changed, "doc_id"].tolist() == ["CR#93E-1860"]


def test_run_ignores_junk_after_run_id_and_mixed_whitespace() -> None:
    run = read_run(DATA / "results.trunc")
    assert list(run.columns) == ["query_id", "doc_id", "score"]
    assert run.iloc[0].tolist() == ["301", "FBIS3-27619", 2.138276]
    assert set(run["query_id"]) == {"301", "303"}


def test_run_doc_ids_may_contain_hash() -> None:
    run = read_run(DATA / "results.comment.test")
    assert run["doc_id"].str.contains("#").all()


def test_run_reads_scientific_and_negative_scores() -> None:
    run = read_run(DATA / "edge.run")
    scores = dict(zip(run["doc_id"], run["score"], strict=True))
    assert scores["d4"] == -1.5
    assert scores["c1"] == 0.001


@pytest.mark.parametrize(
    "name", ["qrels.test", "qrels.rel_level", "edge.qrels", "qrels.test.with-comments"]
)
def test_fast_qrels_reader_matches_reference_pass(name: str) -> None:
    fast = read_qrels(DATA / name)
    slow = _read_slow(DATA / name, QRELS_FIELDS, _QRELS_KEEP, exact=True).to_pandas()
    assert fast.equals(slow)


@pytest.mark.parametrize("name", ["results.test", "results.trunc", "edge.run"])
def test_fast_run_reader_matches_reference_pass(name: str) -> None:
    fast = read_run(DATA / name)
    slow = _read_slow(DATA / name, RUN_FIELDS, _RUN_KEEP, exact=False).to_pandas()
    assert fast.equals(slow)


def test_qrels_with_three_fields_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 0 d1 1\n# note\nq1 0 d2\n")
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert caught.value.line == 3
    assert "expected 4 fields, found 3" in str(caught.value)


def test_qrels_with_fractional_grade_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 0 d1 1\nq1 0 d2 0.5\n")
    with pytest.raises(InputError, match=r"line 2: grade '0.5' is not an integer"):
        read_qrels(path)


def test_duplicate_judgment_names_the_second_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(InputError, match=r"line 3: duplicate judgment"):
        read_qrels(path)


def test_duplicate_doc_in_one_ranking_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq1 Q0 d1 3 0.5 r\n")
    with pytest.raises(InputError, match=r"line 3: duplicate doc id"):
        read_run(path)


def test_same_doc_in_two_queries_is_fine(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 Q0 d1 1 2.0 r\nq2 Q0 d1 1 2.0 r\n")
    assert len(read_run(path)) == 2


def test_run_with_non_numeric_score_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 high r\n")
    with pytest.raises(InputError, match=r"line 2: score 'high' is not a number"):
        read_run(path)


def test_run_with_five_fields_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0\n")
    with pytest.raises(InputError, match=r"line 2: expected at least 6 fields, found 5"):
        read_run(path)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file is empty"):
        read_qrels(_write(tmp_path, ""))


def test_file_with_only_comments_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no judgments"):
        read_qrels(_write(tmp_path, "# nothing here\n\n"))


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b"q1 0 d1 1\nq1 0 d\xff2 1\n")
    with pytest.raises(InputError, match=r"line 2: not valid UTF-8"):
        read_qrels(path)


def test_tabs_and_spaces_mixed_read_like_whitespace(tmp_path: Path) -> None:
    path = _write(tmp_path, "q1\t0 d1  1\n  q1 0\td2 0 \r\n")
    qrels = read_qrels(path)
    assert qrels.values.tolist() == [["q1", "d1", 1], ["q1", "d2", 0]]


SPACES = {"no-break": "\u00a0", "ideographic": "\u3000", "thin": "\u2009", "next line": "\u0085"}


@pytest.mark.parametrize("space", list(SPACES.values()), ids=list(SPACES))
@pytest.mark.parametrize(
    ("kind", "lines", "field", "value"),
    [
        ("qrels", ["q1 0 d1 1", "q2{s}x 0 d1 1"], "query id", "q2{s}x"),
        ("qrels", ["q1\t0\td1\t1", "q2\t0\td1{s}\t1"], "doc id", "d1{s}"),
        ("qrels", ["q1 0 d1 1", "{s}q2 0 d2 0"], "query id", "{s}q2"),
        ("run", ["q1 Q0 d1 1 2.5 run", "q1 Q0 d{s}2 2 2.0 run"], "doc id", "d{s}2"),
        ("run", ["q1\tQ0\td1\t1\t2.5\tr", "q2{s}\tQ0\td1\t1\t2.5\tr"], "query id", "q2{s}"),
    ],
)
def test_an_id_with_unicode_whitespace_names_the_line(
    tmp_path: Path, space: str, kind: str, lines: list[str], field: str, value: str
) -> None:
    """trec_eval splits at ASCII whitespace only, and the CSV reader refuses these ids: a
    no-break or ideographic space is part of the id, which the input contract refuses."""
    path = _write(tmp_path, "\n".join(lines).format(s=space) + "\n")
    with pytest.raises(InputError) as caught:
        (read_qrels if kind == "qrels" else read_run)(path)
    what = "a control character" if space == "\u0085" else "whitespace"
    assert caught.value.line == 2
    assert caught.value.problem == f"{field} {value.format(s=space)!r} contains {what}"


def test_a_unicode_space_between_run_fields_does_not_shift_them(tmp_path: Path) -> None:
    # split at U+00A0 this line would read doc "x" with score 1; trec_eval keeps Q0\xa0x whole
    run = read_run(_write(tmp_path, "q1 Q0\u00a0x d1 1 2.5 run\n"))
    assert run.to_dict(orient="records") == [{"query_id": "q1", "doc_id": "d1", "score": 2.5}]


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_qrels(tmp_path / "absent.txt")


_FIELD = st.text(alphabet="ab1#.-_é\u00a0\u3000", min_size=1, max_size=4)
_SEP = st.sampled_from([" ", "  ", "\t", " \t"])


@st.composite
def _qrels_text(draw: st.DrawFn) -> str:
    """Qrels-like text: mostly valid lines, with odd whitespace, comments, blanks, bad lines."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["ok", "ok", "ok", "comment", "blank", "short", "badgrade"]))
        fields = [draw(_FIELD), "0", draw(_FIELD), str(draw(st.integers(-1, 3)))]
        if kind == "comment":
            fields = ["#", draw(_FIELD), "x", "1"]
        elif kind == "blank":
            fields = []
        elif kind == "short":
            fields = fields[:3]
        elif kind == "badgrade":
            fields[3] = "1.5"
        sep = draw(_SEP)
        lead = draw(st.sampled_from(["", "", " "]))
        trail = draw(st.sampled_from(["", "", " ", "\r"]))
        lines.append(lead + sep.join(fields) + trail)
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@given(_qrels_text())
def test_fast_reader_agrees_with_reference_pass_on_any_input(text: str) -> None:
    import tempfile

    assume(text)  # a zero-byte file has its own message, tested above

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qrels.txt"
        path.write_bytes(text.encode("utf-8"))
        try:
            expected = _read_slow(path, QRELS_FIELDS, _QRELS_KEEP, exact=True).to_pylist()
        except InputError as error:
            with pytest.raises(InputError) as caught:
                read_qrels(path)
            assert (caught.value.line, caught.value.problem) == (error.line, error.problem)
            return
        assert read_qrels(path).to_dict(orient="records") == expected


@st.composite
def _run_text(draw: st.DrawFn) -> str:
    """Run-like text whose odd whitespace falls in the fields the reader does not keep."""
    lines = []
    for number in range(draw(st.integers(1, 6))):
        fields = [draw(_FIELD), "Q0", f"d{number}", "1", "2.5", "run"]
        if draw(st.booleans()):
            fields[draw(st.sampled_from([1, 3, 5]))] = ""  # an empty field
        sep = draw(_SEP)
        lead = draw(st.sampled_from(["", "", " "]))
        trail = draw(st.sampled_from(["", "", " ", "\r", " \r"]))
        lines.append(lead + sep.join(fields) + trail)
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@pytest.mark.parametrize("scan_bytes", [1 << 24, 1, 3])
@given(text=_run_text())
def test_fast_run_reader_agrees_with_reference_pass_on_any_input(
    text: str, scan_bytes: int
) -> None:
    import tempfile

    from evalplat.formats import trec_arrow

    assume(text.strip())
    original, trec_arrow._SCAN_BYTES = (
        trec_arrow._SCAN_BYTES,
        scan_bytes,
    )  # patterns across scan chunks
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "run.txt"
            path.write_bytes(text.encode("utf-8"))
            try:
                expected = _read_slow(path, RUN_FIELDS, _RUN_KEEP, exact=False).to_pylist()
            except InputError as error:
                with pytest.raises(InputError) as caught:
                    read_run(path)
                assert (caught.value.line, caught.value.problem) == (error.line, error.problem)
                return
            assert read_run(path).to_dict(orient="records") == expected
    finally:
        trec_arrow._SCAN_BYTES = original


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 d1 1 2.5 run\nq1  d2 2 2.0 run\n",
        "q1 Q0 d1 1 2.5 \n",
        "q1 Q0 d1 1 2.5 run\nq1 Q0 d2  1 r\n",
    ],
)
def test_empty_skipped_field_is_not_read_as_a_shifted_line(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match="expected at least 6 fields"):
        read_run(_write(tmp_path, text))
