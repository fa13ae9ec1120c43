"""The HTTP side of a judge: one chat completion per (query, document) pair.

The request is OpenAI's chat-completions protocol, which OpenAI, Azure OpenAI, Ollama, vLLM,
llama.cpp's server and LM Studio all speak. With ``structured`` (the default) it asks for
``response_format: {"type": "json_schema", ...}``. An endpoint that refuses that (HTTP 400 or
422, or any error whose body names ``response_format``: llama-cpp-python's server answers its
validation error with a 500) is asked again with ``{"type": "json_object", "schema": ...}``
(the form llama-cpp-python's server constrains its output with), and one refusing that too in
plain text. The step down is kept for the rest of the command (``answer_format``).

Faults, each told apart so that the command can say what happened in one line:

- 429, 5xx, a timeout, a dropped connection, or a 200 whose body is no chat-completions
  response (not JSON, JSON nested too deeply, no ``choices``): retried with the search runner's
  backoff policy (``evalplat.searchers.retry``, full jitter, ``Retry-After`` honoured); when
  retries run out the command stops (exit 3) and can be run again;
- 401 / 403 (the key is refused), 404 (the model is not served, or the URL is wrong), any other
  4xx, an unreachable endpoint: ``JudgeUnavailableError`` at once (exit 3);
- every attempt, retries included, takes one request from the command's ``RequestBudget``;
  when it is spent the command stops before sending more.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError, InputError, OperationalError
from evalplat.inputs.env import expand_env
from evalplat.inputs.http_headers import header_problem
from evalplat.judging.answers import schema
from evalplat.judging.prompts import SYSTEM
from evalplat.searchers.base import TransientSearchError
from evalplat.searchers.retry import RetryPolicy, call_with_retries

if TYPE_CHECKING:
    import httpx

    from evalplat.judging.spec import JudgeSpec

# how the answer is asked for, best first; a refusal steps down one (module doc)
ANSWER_FORMATS = ("json_schema", "json_object", "text")


class JudgeUnavailableError(OperationalError):
    """The endpoint cannot be used: unreachable, refusing the key, not serving the model."""


class BudgetSpent(EvalplatError):
    """The command's budget of requests is used up; nothing more is sent."""


class TransientJudgeError(TransientSearchError):
    """A request that may pass on retry (429, 5xx, timeout, dropped connection)."""


class RequestBudget:
    """At most ``limit`` requests in one command, shared by the worker threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.sent = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.sent >= self.limit:
                raise BudgetSpent(f"the budget of {self.limit} requests is spent")
            self.sent += 1


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None


class ChatClient:
    """Chat completions against one judge's endpoint (module doc)."""

    def __init__(
        self,
        spec: JudgeSpec,
        budget: RequestBudget,
        environ: Mapping[str, str] | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        import httpx

        self.spec = spec
        self.budget = budget
        self.answer_format = ANSWER_FORMATS[0] if spec.structured else "text"
        self.policy = policy or RetryPolicy(retries=spec.retries, backoff=0.5, max_backoff=20.0)
        self._http = httpx.Client(headers=expanded_headers(spec, environ), timeout=spec.timeout)
        self._lock = threading.Lock()

    @property
    def structured(self) -> bool:
        return self.answer_format != "text"

    def close(self) -> None:
        self._http.close()

    def complete(self, user: str) -> Completion:
        """The model's answer to ``user`` (one prompt), retried as the module doc says."""
        return call_with_retries(lambda: self._attempt(user), self.policy)

    def _attempt(self, user: str) -> Completion:
        import httpx

        answer_format = self.answer_format
        self.budget.take()
        try:
            response = self._http.post(self.spec.endpoint, json=self._body(user, answer_format))
        except httpx.ConnectError as error:
            raise TransientJudgeError(f"cannot reach {self.spec.endpoint}: {error}") from None
        except httpx.TimeoutException:
            raise TransientJudgeError(
                f"{self.spec.endpoint} did not answer within {self.spec.timeout:g} s"
            ) from None
        except httpx.TransportError as error:  # a dropped connection, a broken response
            raise TransientJudgeError(f"{self.spec.endpoint}: {error}") from None
        except httpx.InvalidURL as error:
            raise JudgeUnavailableError(f"{self.spec.endpoint}: {error}") from None
        if answer_format != "text" and _refuses_schema(response):
            with self._lock:  # one step down, once, however many requests saw the refusal
                if self.answer_format == answer_format:
                    self.answer_format = ANSWER_FORMATS[ANSWER_FORMATS.index(answer_format) + 1]
            return self._attempt(user)
        return self._completion(response)

    def _body(self, user: str, answer_format: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": user},
            ],
            "temperature": self.spec.temperature,
        }
        if answer_format == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema(self.spec.scale)}
        elif answer_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "relevance_grade",
                    "strict": True,
                    "schema": schema(self.spec.scale),
                },
            }
        return body

    def _completion(self, response: httpx.Response) -> Completion:
        status = response.status_code
        where = f"judge '{self.spec.name}' at {self.spec.endpoint}"
        if status == 429 or status >= 500:
            raise TransientJudgeError(f"{where}: HTTP {status}", retry_after=_retry_after(response))
        if status in (401, 403):
            raise JudgeUnavailableError(f"{where}: the API key was refused (HTTP {status})")
        if status == 404:
            raise JudgeUnavailableError(
                f"{where}: model '{self.spec.model}' is not served there, or the URL is wrong "
                f"(HTTP 404: {_snippet(response)})"
            )
        if status >= 400:
            raise JudgeUnavailableError(f"{where}: HTTP {status}: {_snippet(response)}")
        try:
            data = response.json()
            message = data["choices"][0]["message"]
            text = message.get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            # RecursionError: JSON nested deeper than the parser goes is no answer either
            raise TransientJudgeError(f"{where}: not a chat-completions response") from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Completion(
            text=str(text),
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
        )


def expanded_headers(spec: JudgeSpec, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The request headers with ``${VAR}`` placeholders expanded; an unset variable, or one
    whose value cannot go in a header (a line break, a non-ASCII character), is an
    ``InputError`` naming the judge and the header."""
    headers = {str(k): str(v) for k, v in expand_env(spec.headers, environ).items()}
    if spec.api_key is not None:
        headers.setdefault("Authorization", f"Bearer {expand_env(spec.api_key, environ)}")
    for name, value in headers.items():
        problem = header_problem(name, value)
        if problem is not None:
            raise InputError(f"judge '{spec.name}': {problem} once its ${{VAR}} is expanded")
    return headers


def _refuses_schema(response: httpx.Response) -> bool:
    status = response.status_code
    if status in (400, 422):
        return True
    return status >= 500 and "response_format" in response.text


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return None if value is None else max(0.0, float(value))
    except ValueError:
        return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _snippet(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text[:160] or "no body"
