"""The suite's own rules: property tests are reproducible, and no test is skipped silently."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

CONFTEST = Path(__file__).resolve().parent / "conftest.py"

TINY_SUITE = """
import pytest

def test_runs():
    assert True

def test_needs_a_service():
    pytest.skip("the frobnicator is not running")
"""


def test_property_tests_are_derandomized_unless_exploring(pytestconfig: pytest.Config) -> None:
    assert settings.get_profile("ci").derandomize
    explore = settings.get_profile("explore")
    assert not explore.derandomize
    assert explore.max_examples > settings.get_profile("ci").max_examples
    chosen = pytestconfig.getoption("hypothesis_profile", None) or os.environ.get(
        "EVALPLAT_HYPOTHESIS_PROFILE"
    )
    if chosen in (None, "ci"):
        assert settings.default.derandomize and settings.default.database is None


def _tiny_suite(pytester: pytest.Pytester, source: str) -> None:
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_tiny=source)


@pytest.mark.slow
def test_a_skip_fails_the_run_when_skips_are_forbidden(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tiny_suite(pytester, TINY_SUITE)
    monkeypatch.setenv("EVALPLAT_FORBID_SKIPS", "1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*1 test(s) skipped (EVALPLAT_FORBID_SKIPS is set)*",
            "*test_tiny.py::test_needs_a_service: the frobnicator is not running",
        ]
    )
    result.assert_outcomes(passed=1, skipped=1)


@pytest.mark.slow
def test_a_skip_with_its_reason_passes_when_skips_are_allowed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tiny_suite(pytester, TINY_SUITE)
    monkeypatch.delenv("EVALPLAT_FORBID_SKIPS", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=1, skipped=1)


@pytest.mark.slow
def test_a_skip_without_a_reason_always_fails_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tiny_suite(pytester, "import pytest\n\ndef test_quiet():\n    pytest.skip()\n")
    monkeypatch.delenv("EVALPLAT_FORBID_SKIPS", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_tiny.py::test_quiet: skipped without a reason"])


def test_ci_refuses_to_run_with_golden_updates_switched_on() -> None:
    script = CONFTEST.parent.parent / ".ci" / "run"
    env = {**os.environ, "EVALPLAT_UPDATE_GOLDEN": "1"}
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "EVALPLAT_UPDATE_GOLDEN is set" in done.stderr
