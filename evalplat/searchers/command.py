"""The ``command`` searcher: an external engine process speaking JSON lines.

The process is started once (``command``: a list, or a string split like a shell command line,
``${ENV}`` expanded) and kept running. For each query evalplat writes one line to its stdin:

    {"query_id": "q1", "query": "boundary layer", "depth": 100}

and reads one line from its stdout:

    {"query_id": "q1", "results": [{"id": "d12", "score": 7.5}, {"id": "d3", "score": 6.1}]}

Results are in ranked order; a result may also be ``["d12", 7.5]``; a missing score is derived
from the rank. ``{"query_id": "q1", "error": "..."}`` reports a failed query. The process must
flush stdout after each line; stderr is free for its logs (the last lines are quoted when it
dies).

``processes`` engine processes run side by side (default 1); each serves one query at a time.
Errors: a process that exits, cannot be written to or does not answer within ``timeout``
seconds is a ``TransientSearchError`` and is restarted on the next query; a line that is not
JSON, answers another query id, or has no ``results`` is a ``SearchError`` naming the line, and
the process is restarted too, since its output can no longer be trusted to be in step.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
import time
from collections import deque
from typing import IO, Any

from evalplat.errors import InputError
from evalplat.inputs.env import expand_env
from evalplat.searchers.base import (
    BackendUnavailableError,
    Hit,
    Searcher,
    SearchError,
    TransientSearchError,
    hits_from_results,
    record_request_ms,
    shorten,
)
from evalplat.searchers.kinds import (
    PROCESSES_MAX,
    TIMEOUT_MAX,
    Param,
    SearchContext,
    SearcherKind,
)


class _EngineProcess:
    """One running engine with threads draining its stdout (into a queue) and stderr."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=3)
        stdout, stderr = self.process.stdout, self.process.stderr
        if stdout is None or stderr is None:  # pragma: no cover - PIPE always gives streams
            raise RuntimeError("subprocess pipes missing")
        self._readers = [
            threading.Thread(target=self._drain, args=(stdout, True), daemon=True),
            threading.Thread(target=self._drain, args=(stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _drain(self, stream: IO[str], is_stdout: bool) -> None:
        # The reader closes its own stream at EOF: closing it from another thread while this one
        # is blocked reading it is not safe.
        try:
            for line in stream:
                if is_stdout:
                    self.lines.put(line)
                else:
                    self.stderr_tail.append(line.strip())
        except (OSError, ValueError):
            pass
        finally:
            stream.close()
            if is_stdout:
                self.lines.put(None)  # end of output: the process has exited

    def alive(self) -> bool:
        return self.process.poll() is None

    def request(self, line: str, timeout: float) -> str | None:
        """Send one line, return the answer line, or None when the process has exited."""
        stdin = self.process.stdin
        if stdin is None:  # pragma: no cover - PIPE always gives a stream
            return None
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return None
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None

    def describe_exit(self) -> str:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        self._readers[1].join(timeout=1)  # let the stderr reader catch the last words
        tail = " | ".join(line for line in self.stderr_tail if line)
        return f"exited with code {code}" + (f": {shorten(tail)}" if tail else "")

    def stop(self, kill: bool = False) -> None:
        """End the process (closing stdin asks it to; ``kill`` or 2 s later forces it)."""
        if kill:
            self.process.kill()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for reader in self._readers:
            reader.join(timeout=2)


class CommandSearcher(Searcher):
    """A pool of ``processes`` engine processes; each query borrows one."""

    kind = "command"

    def __init__(self, params: dict[str, Any], context: SearchContext) -> None:
        self.label = " ".join(params["command"])  # unexpanded: safe to show in messages
        self.argv: list[str] = expand_env(params["command"])
        if not self.argv:
            raise InputError("command searcher needs a non-empty command")
        self.timeout: float = params["timeout"]
        if params["processes"] < 1:
            raise InputError("command searcher param 'processes' must be at least 1")
        # A slot is a one-item list so a restarted process replaces the old one in place.
        self._slots: list[list[_EngineProcess | None]] = [
            [None] for _ in range(params["processes"])
        ]
        self._pool: queue.Queue[list[_EngineProcess | None]] = queue.Queue()
        for slot in self._slots:
            self._pool.put(slot)
        self._closed = False

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        slot = self._pool.get()
        try:
            return self._search_with(slot, query_id, text, depth)
        finally:
            self._pool.put(slot)

    def _search_with(
        self, slot: list[_EngineProcess | None], query_id: str, text: str, depth: int
    ) -> list[Hit]:
        engine = slot[0]
        if engine is None or not engine.alive():
            engine = slot[0] = self._start()
        request = json.dumps({"query_id": query_id, "query": text, "depth": depth})
        sent = time.perf_counter()  # a free engine process found, and started: the send
        try:
            line = engine.request(request, self.timeout)
            record_request_ms((time.perf_counter() - sent) * 1000.0)
        except TimeoutError:
            engine.stop(kill=True)
            slot[0] = None
            raise TransientSearchError(
                f"command {self.label!r}: no answer to query {query_id!r} within "
                f"{self.timeout:g}s; restarting it"
            ) from None
        if line is None:
            slot[0] = None
            reason = engine.describe_exit()
            engine.stop()
            raise TransientSearchError(f"command {self.label!r} {reason}")
        try:
            return self._parse(line, query_id)
        except SearchError:
            engine.stop()  # out of step with our requests: start afresh for the next query
            slot[0] = None
            raise

    def _parse(self, line: str, query_id: str) -> list[Hit]:
        where = f"command {self.label!r} answered query {query_id!r} with {shorten(line)!r}"
        try:
            answer = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, 4300+ digit integers, too deep
            raise SearchError(f"{where}: not a JSON line") from None
        if not isinstance(answer, dict):
            raise SearchError(f"{where}: expected a JSON object")
        if str(answer.get("query_id")) != query_id:
            raise SearchError(f"{where}: it names another query id")
        if "error" in answer:
            raise SearchError(f"command {self.label!r}, query {query_id!r}: {answer['error']}")
        if "results" not in answer:
            raise SearchError(f"{where}: no 'results'")
        return hits_from_results(answer["results"], f"command {self.label!r}")

    def _start(self) -> _EngineProcess:
        if self._closed:
            raise SearchError(f"command {self.label!r}: searcher is closed")
        try:
            return _EngineProcess(self.argv)
        except OSError as error:
            raise SearchError(f"command {self.label!r} cannot start: {error.strerror}") from None

    def check(self) -> None:
        try:
            self.search("evalplat-check", "evalplat", 1)
        except SearchError as error:
            raise BackendUnavailableError(str(error)) from None

    def close(self) -> None:
        self._closed = True
        for slot in self._slots:
            engine = slot[0]
            if engine is not None:
                engine.stop()
                slot[0] = None


def check_command(params: dict[str, Any]) -> None:
    """A program to start: the command is not empty and its first word is not blank."""
    argv = params["command"]
    if not argv or not argv[0].strip():
        raise InputError("command searcher param 'command' must name a program to start")


def _create(params: dict[str, Any], context: SearchContext) -> Searcher:
    return CommandSearcher(params, context)


KIND = SearcherKind(
    name="command",
    description="an external process: JSON lines in (one per query), JSON lines out",
    params=(
        Param("command", "list", None, "program and arguments", required=True),
        Param(
            "timeout", "float", 30.0, "seconds to wait for one answer", above=0, maximum=TIMEOUT_MAX
        ),
        Param(
            "processes",
            "int",
            1,
            "engine processes run side by side",
            minimum=1,
            maximum=PROCESSES_MAX,
        ),
    ),
    factory=_create,
    check=check_command,
)
