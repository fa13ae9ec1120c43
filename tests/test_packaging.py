"""The wheel carries migrations, templates and bundled test sets, and works outside the checkout."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("evalplat-*.whl")
    return built


def test_wheel_contains_the_data_folders(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "evalplat/_data/migrations/env.py" in names
    assert any(n.startswith("evalplat/_data/migrations/versions/0001") for n in names)
    assert "evalplat/_data/testsets/cranfield/qrels.txt" in names
    assert any(n.startswith("evalplat/_data/templates/") for n in names)


@pytest.mark.slow
def test_installed_wheel_initialises_a_database_from_another_directory(
    wheel: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
    )
    # Dependencies come from the test environment, evalplat itself only from the wheel: a
    # path listed in a .pth file is added to sys.path after the venv's own site-packages.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import evalplat, evalplat.resources as r; "
            "print(evalplat.__file__); print(r.data_dir('migrations'))",
        ],
        cwd=elsewhere,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert where[0].startswith(str(venv)), "evalplat was not imported from the wheel"
    assert where[1].startswith(str(venv)) and where[1].endswith("_data/migrations")
    evalplat = venv / "bin" / "evalplat"
    init = subprocess.run([str(evalplat), "init"], cwd=elsewhere, capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    assert (elsewhere / "evalplat.db").exists()
    qrels = where[1].replace("migrations", "testsets/cranfield/qrels.txt")
    imported = subprocess.run(
        [str(evalplat), "testset", "import", "cranfield", "--qrels", qrels],
        cwd=elsewhere,
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr
    assert "imported cranfield@1" in imported.stdout
