"""Offline against online through the store and the CLI, on SQLite and PostgreSQL: four arms of
a synthetic log whose offline nDCG order is their CTR order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalplat.cli import app
from evalplat.events.synthetic import Arm, CascadeModel, write_ubi_log
from evalplat.store import Store

GRADES = {"wing flutter": {"w1": 3, "w2": 2, "w3": 1}, "tail rotor": {"t1": 3, "t2": 2, "t3": 1}}
IDS = {"wing flutter": "q1", "tail rotor": "q2"}
# Arm n shows worse rankings and holds less attention than arm n - 1.
RANKINGS = [
    {"wing flutter": ["w1", "w2", "w3", "w4"], "tail rotor": ["t1", "t2", "t3", "t4"]},
    {"wing flutter": ["w2", "w1", "w4", "w3"], "tail rotor": ["t2", "t1", "t4", "t3"]},
    {"wing flutter": ["w4", "w3", "w2", "w1"], "tail rotor": ["t3", "t4", "t2", "t1"]},
    {"wing flutter": ["w5", "w6", "w4", "w3"], "tail rotor": ["t5", "t6", "t4", "t3"]},
]
ATTENTION = [1.0, 0.9, 0.8, 0.7]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result.stdout


def _world(url: str, folder: Path) -> None:
    qrels = [f"{IDS[t]} 0 {d} {g}" for t, docs in GRADES.items() for d, g in docs.items()]
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    (folder / "queries.tsv").write_text(
        "".join(f"{q}\t{t}\n" for t, q in IDS.items()), encoding="utf-8"
    )
    _cli("testset", "import", "air", "--qrels", str(folder / "qrels.txt"), "--queries",
         str(folder / "queries.tsv"), "--db", url)  # fmt: skip
    for n, rankings in enumerate(RANKINGS, start=1):
        run = folder / f"arm{n}.run"
        run.write_text(
            "".join(
                f"{IDS[t]} Q0 {d} {r} {10 - r} arm{n}\n"
                for t, docs in rankings.items()
                for r, d in enumerate(docs, start=1)
            ),
            encoding="utf-8",
        )
        _cli("import-run", str(run), "--config", f"arm{n}", "-t", "air", "--db", url)
    arms = [Arm(f"arm{n}@1", RANKINGS[n - 1], ATTENTION[n - 1]) for n in range(1, 5)]
    log = write_ubi_log(folder / "ab.jsonl", arms, GRADES, sessions=300, seed=11, days=2,
                        model=CascadeModel())  # fmt: skip
    _cli("events", "import", str(log.path), "--db", url)
    _cli("events", "score", "--metric", "online:CTR", "--metric", "online:Abandonment",
         "--db", url)  # fmt: skip


def test_arms_ordered_alike_offline_and_online_agree_fully(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    with Store.open(db_url) as store:
        offline, online = store.agreement_inputs("air")
    ndcg = offline[offline["metric"] == "nDCG@10"].set_index("version")["value"]
    assert list(ndcg.sort_values(ascending=False).index) == [f"arm{n}@1" for n in range(1, 5)]
    ctr = online[online["kpi"] == "online:CTR"]
    assert len(ctr) == 8 and set(ctr["day"]) == {"2026-03-01", "2026-03-02"}
    assert (ctr["sessions"] == 300).all()

    out = json.loads(_cli("online", "agreement", "--testset", "air", "--metric", "ndcg@10",
                          "--kpi", "online:CTR", "--kpi", "online:Abandonment", "--db", db_url,
                          "--json"))  # fmt: skip
    assert out["versions"] == [f"arm{n}@1" for n in range(1, 5)]
    rows = {row["kpi"]: row for row in out["agreement"]}
    for kpi in ("online:CTR", "online:Abandonment"):  # lower-is-better abandonment flips too
        row = rows[kpi]
        assert (row["metric"], row["versions"], row["status"]) == ("nDCG@10", 4, "ok")
        assert row["tau"] == pytest.approx(1.0) and row["rho"] == pytest.approx(1.0)
        assert (row["pairs"], row["agreeing"], row["sign_agreement"]) == (6, 6, 1.0)
        # every resample of a monotone relation that is not constant is monotone too
        assert row["tau_ci"] == row["rho_ci"] == pytest.approx([1.0, 1.0])

    default = json.loads(_cli("online", "agreement", "-t", "air", "-k", "online:CTR", "--db",
                              db_url, "--json"))  # fmt: skip
    metrics = {row["metric"] for row in default["agreement"]}
    assert {"nDCG@10", "AP"} <= metrics and "Judged@10" not in metrics  # coverage predicts nothing
    text = _cli("online", "agreement", "-t", "air", "-m", "nDCG@10", "-k", "online:CTR",
                "--db", db_url)  # fmt: skip
    assert "4 versions: arm1@1 arm2@1 arm3@1 arm4@1" in text
    assert "nDCG@10\tonline:CTR\t4 versions\ttau=+1.00 [" in text and "A/B agree 6/6 (100%)" in text


def test_agreement_with_too_few_versions_or_bad_names(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    recent = _cli("online", "agreement", "-t", "air", "-k", "online:CTR", "-m", "P@5",
                  "--since", "1d", "--db", db_url)  # fmt: skip
    assert "P@5\tonline:CTR\t0 versions\tinsufficient data" in recent  # the log is from March
    runner = CliRunner()
    for args, message in (
        (["-t", "online"], "holds the online runs"),
        (["-t", "ghost"], "no test set named 'ghost'"),
        (["-t", "air", "--kpi", "nDCG@10"], "not an online measure"),
        (["-t", "air", "--since", "soon"], "--since: 'soon' is not a window"),
    ):
        result = runner.invoke(app, ["online", "agreement", *args, "--db", db_url])
        assert result.exit_code == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)


def test_online_compare_takes_the_two_arms_runs_of_one_day(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    out = json.loads(_cli("online", "compare", "arm1", "arm4@1", "-m", "online:CTR",
                          "--db", db_url, "--json"))  # fmt: skip
    assert out["day"] == "2026-03-02"  # the latest day both were online
    [ctr] = out["metrics"]
    assert (ctr["metric"], ctr["test"], ctr["verdict"]) == ("online:CTR", "bootstrap", "regression")
    assert ctr["delta"] < 0 and ctr["ci_high"] < 0
    text = _cli("online", "compare", "arm2@1", "arm1@1", "--day", "2026-03-01", "-m",
                "online:CTR", "--db", db_url)  # fmt: skip
    assert "arm2@1 against arm1@1 on 2026-03-01" in text and "verdict: improvement" in text
    worse = _cli("online", "compare", "arm1@1", "arm3@1", "-m", "online:CTR", "--db", db_url)
    assert "online:CTR regressed\n" in worse and "verdict: regression" in worse
    runner = CliRunner()
    for args, message in (
        (["arm1", "arm2", "--day", "2026-03-09"], "arm1 has no online run on 2026-03-09"),
        (["arm1", "arm2", "--day", "March"], "--day: 'March' is not a date"),
        (["arm1", "ghost"], "no config named 'ghost'"),
    ):
        result = runner.invoke(app, ["online", "compare", *args, "--db", db_url])
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert message in result.stderr, (args, result.stderr)
