"""Offline against online through the store and the CLI, on SQLite and PostgreSQL: five arms of
a synthetic log whose offline nDCG order is their CTR order, and the pairs a project chooses."""

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
    {"wing flutter": ["w5", "w6", "w7", "w8"], "tail rotor": ["t5", "t6", "t7", "t8"]},
]
ATTENTION = [1.0, 0.9, 0.8, 0.7, 0.6]
ARMS = [f"arm{n}@1" for n in range(1, 6)]


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
    arms = [Arm(f"arm{n}@1", RANKINGS[n - 1], ATTENTION[n - 1]) for n in range(1, 6)]
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
    assert list(ndcg.sort_values(ascending=False).index) == ARMS
    ctr = online[online["kpi"] == "online:CTR"]
    assert len(ctr) == 10 and set(ctr["day"]) == {"2026-03-01", "2026-03-02"}
    assert (ctr["sessions"] == 300).all()

    out = json.loads(_cli("online", "agreement", "--testset", "air", "--metric", "ndcg@10",
                          "--kpi", "online:CTR", "--kpi", "online:Abandonment", "--db", db_url,
                          "--json"))  # fmt: skip
    assert out["versions"] == ARMS
    rows = {row["kpi"]: row for row in out["agreement"]}
    for kpi in ("online:CTR", "online:Abandonment"):  # lower-is-better abandonment flips too
        row = rows[kpi]
        assert (row["metric"], row["versions"], row["status"]) == ("nDCG@10", 5, "ok")
        assert row["tau"] == pytest.approx(1.0) and row["rho"] == pytest.approx(1.0)
        assert (row["pairs"], row["agreeing"], row["sign_agreement"]) == (10, 10, 1.0)
        # exact: of 120 orderings only the perfect one and its reverse reach |tau| = 1
        assert row["tau_p"] == pytest.approx(2 / 120)
        assert (row["permutations"], row["exact"]) == (120, True)
        assert "tau_ci" not in row

    # without a project or names: one pair, nDCG@10 against online:CTR
    default = json.loads(_cli("online", "agreement", "-t", "air", "--db", db_url, "--json"))
    assert [(r["metric"], r["kpi"]) for r in default["agreement"]] == [("nDCG@10", "online:CTR")]
    text = _cli("online", "agreement", "-t", "air", "-m", "nDCG@10", "-k", "online:CTR",
                "--db", db_url)  # fmt: skip
    assert f"5 versions: {' '.join(ARMS)}" in text
    assert "nDCG@10\tonline:CTR\t5 versions\ttau=+1.00 (p=0.017, exact)\trho=+1.00" in text
    assert "A/B agree 10/10 (100%)" in text


def _project(folder: Path, url: str, online: str, gates: str = "") -> Path:
    path = folder / "evalplat.toml"
    configs = "".join(f'[[configs]]\nname = "arm{n}"\nsearcher = "builtin"\n' for n in range(1, 6))
    path.write_text(f'[database]\nurl = "{url}"\n\n{configs}\n{gates}\n[online]\n'
                    f'baseline = "arm1"\n{online}', encoding="utf-8")  # fmt: skip
    return path


def test_the_project_chooses_the_pairs_of_the_command_and_the_site(
    db_url: str, tmp_path: Path
) -> None:
    _world(db_url, tmp_path)
    chosen = _project(
        tmp_path,
        db_url,
        'metrics = ["online:CTR", "online:Abandonment"]\n'
        'agreement = [["AP", "online:Abandonment"], ["nDCG@10", "online:CTR"]]\n',
    )
    out = json.loads(_cli("online", "agreement", "-t", "air", "--project", str(chosen), "--json"))
    assert [(r["metric"], r["kpi"]) for r in out["agreement"]] == [
        ("AP", "online:Abandonment"), ("nDCG@10", "online:CTR")]  # fmt: skip
    site = tmp_path / "site"
    _cli("report", "site", "--out", str(site), "--project", str(chosen))
    page = (site / "online" / "air.html").read_text(encoding="utf-8")
    assert page.count("<td>AP</td><td>online:Abandonment</td>") == 1
    assert page.count("<td>nDCG@10</td><td>online:CTR</td>") == 1
    assert "<td>AP</td><td>online:CTR</td>" not in page  # not chosen, not shown
    # by default: the gated offline metrics against the gated KPIs
    gates = (
        '[[gates]]\nmetric = "nDCG@10"\nmax_drop = 0.01\n\n[[gates]]\nmetric = "AP"\n'
        'max_drop = 0.01\n\n[[gates]]\nmetric = "online:CTR"\nmax_relative_drop = 0.05\n'
    )
    gated = _project(tmp_path, db_url, "", gates)
    out = json.loads(_cli("online", "agreement", "-t", "air", "--project", str(gated), "--json"))
    assert [(r["metric"], r["kpi"]) for r in out["agreement"]] == [
        ("nDCG@10", "online:CTR"), ("AP", "online:CTR")]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('agreement = "nDCG@10"', "must be a list of [offline metric, KPI] pairs"),
        ('agreement = [["nDCG@10"]]', "must be a list of [offline metric, KPI] pairs"),
        ('agreement = [["nDCG@10", "AP"]]', "AP is not an online measure"),
        ('agreement = [["online:CTR", "online:MRR"]]', "online:CTR is an online measure"),
        ('agreement = [["nDCG@10", "online:Nope"]]', "online:Nope"),
    ],
)
def test_a_bad_agreement_key_is_one_line_naming_the_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    path = _project(tmp_path, url, f"{line}\n")
    result = CliRunner().invoke(app, ["online", "agreement", "-t", "air", "--project", str(path)])
    assert result.exit_code == 2, result.stderr
    [error] = result.stderr.strip().splitlines()
    number = 1 + path.read_text(encoding="utf-8").splitlines().index(line)
    assert f"{path}" in error and f"line {number}" in error and message in error, error
    assert not (tmp_path / "e.db").exists()  # refused before the database is opened


def test_agreement_with_too_few_versions_or_bad_names(db_url: str, tmp_path: Path) -> None:
    _world(db_url, tmp_path)
    recent = _cli("online", "agreement", "-t", "air", "-k", "online:CTR", "-m", "P@5",
                  "--since", "1d", "--db", db_url)  # fmt: skip
    assert "P@5\tonline:CTR\t0 versions\ttoo few versions (0)" in recent  # the log is from March
    runner = CliRunner()
    for args, message in (
        (["-t", "online"], "holds the online runs"),
        (["-t", "ghost"], "no test set named 'ghost'"),
        (["-t", "air", "--kpi", "nDCG@10"], "not an online measure"),
        (["-t", "air", "--metric", "online:CTR"], "is an online measure"),
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
