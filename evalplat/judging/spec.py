"""A judge's configuration: a ``[[judges]]`` table of ``evalplat.toml``.

```toml
[[judges]]
name = "gpt"
url = "https://api.openai.com/v1"      # the chat-completions endpoint, or its /v1 base
model = "gpt-4o-mini"
api_key = "${OPENAI_API_KEY}"          # ${VAR} placeholders, expanded only when sending
prompt = "umbrela"                     # or a Jinja file, relative to the project file
```

Optional keys: ``scale`` (``[0, 3]``), ``temperature`` (0), ``concurrency`` (2),
``budget`` (requests per command, 1000), ``timeout`` (seconds per request, 60), ``retries``
(3), ``time_limit`` (seconds per command, none), ``min_kappa`` (the calibration floor, 0.4),
``headers`` (extra HTTP headers, e.g. Azure's ``api-key``), ``structured`` (ask for a JSON
schema answer, true).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.http_headers import header_problem
from evalplat.inputs.validation import CONCURRENCY_MAX, CONTROL, check_number, shown

BUILTIN_PROMPTS = ("umbrela",)
_KEYS = {
    "name",
    "url",
    "model",
    "api_key",
    "prompt",
    "scale",
    "temperature",
    "concurrency",
    "budget",
    "timeout",
    "retries",
    "time_limit",
    "min_kappa",
    "headers",
    "structured",
}
# A grade's source is "llm:<name>" in a 40-character column.
_NAME_LENGTH = 36
SCALE_MAX = 100
# The numeric keys: whole number or not, then minimum, exclusive minimum and maximum
# (docs/judging.md lists them). OpenAI's API takes temperatures from 0 to 2; a request waits at
# most an hour, a command at most a week.
NUMBERS: dict[str, tuple[bool, float | None, float | None, float]] = {
    "temperature": (False, 0, None, 2),
    "concurrency": (True, 1, None, CONCURRENCY_MAX),
    "budget": (True, 0, None, 10_000_000),
    "timeout": (False, None, 0, 3600),
    "retries": (True, 0, None, 20),
    "time_limit": (False, None, 0, 7 * 24 * 3600),
    "min_kappa": (False, -1, None, 1),
}


@dataclass(frozen=True)
class JudgeSpec:
    name: str
    url: str
    model: str
    api_key: str | None = None
    prompt: str = "umbrela"
    prompt_file: Path | None = None
    scale: tuple[int, int] = (0, 3)
    temperature: float = 0.0
    concurrency: int = 2
    budget: int = 1000
    timeout: float = 60.0
    retries: int = 3
    time_limit: float | None = None
    min_kappa: float = 0.4
    headers: dict[str, str] = field(default_factory=dict)
    structured: bool = True

    @property
    def source(self) -> str:
        """The ``source`` of this judge's grades in a test set."""
        return f"llm:{self.name}"

    @property
    def endpoint(self) -> str:
        """The chat-completions URL: ``url`` itself when it names the path, else under it."""
        base, _, query = self.url.partition("?")
        if not base.rstrip("/").endswith("/chat/completions"):
            base = base.rstrip("/") + "/chat/completions"
        return base + (f"?{query}" if query else "")


Fail = Callable[[str, str | None], InputError]


def judge_name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a judge's name (its grades' source is ``llm:NAME``), or
    None."""
    if not name or len(name) > _NAME_LENGTH or not all(c.isalnum() or c in "-_." for c in name):
        return f"judge name must be 1 to {_NAME_LENGTH} letters, digits, '-', '_' or '.'"
    return None


def read_judge(table: dict[str, Any], folder: Path, fail: Fail) -> JudgeSpec:
    """Validate one ``[[judges]]`` table; ``fail(problem, key)`` builds the error to raise
    (naming the file, the table and the key's line)."""
    for key in table:
        if key not in _KEYS:
            raise fail(f"unknown key; expected one of: {', '.join(sorted(_KEYS))}", key)
    texts: dict[str, str] = {}
    for key in ("name", "url", "model"):
        value = table.get(key)
        if not isinstance(value, str) or not value.strip():
            raise fail(f'needs {key} = "..." (a non-empty string)', key)
        texts[key] = value
    name = texts["name"]
    problem = judge_name_problem(name)
    if problem is not None:
        raise fail(problem, "name")
    problem = url_problem(texts["url"])
    if problem is not None:
        raise fail(problem, "url")
    api_key = table.get("api_key")
    if api_key is not None and not isinstance(api_key, str):
        raise fail('must be a string, e.g. "${OPENAI_API_KEY}"', "api_key")
    prompt = table.get("prompt", "umbrela")
    if not isinstance(prompt, str) or not prompt:
        raise fail('must be "umbrela" or the path of a Jinja file', "prompt")
    prompt_file = None
    if prompt not in BUILTIN_PROMPTS:
        prompt_file = Path(prompt) if Path(prompt).is_absolute() else folder / prompt
        if not prompt_file.is_file():
            raise fail(f"prompt file {prompt_file} not found", "prompt")
    scale = table.get("scale", [0, 3])
    if (
        not isinstance(scale, list)
        or len(scale) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in scale)
        or not 0 <= scale[0] < scale[1] <= SCALE_MAX
    ):
        raise fail(f"must be [lowest, highest] grades from 0 to {SCALE_MAX}, e.g. [0, 3]", "scale")
    numbers = {
        key: _number(table[key], key, fail, *limits)
        for key, limits in NUMBERS.items()
        if table.get(key) is not None
    }
    headers = table.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise fail("must be a table of strings", "headers")
    for header, value in headers.items():
        problem = header_problem(header, value)
        if problem is not None:
            raise fail(problem, "headers")
    if api_key is not None and (problem := header_problem("Authorization", api_key)):
        raise fail(problem, "api_key")
    structured = table.get("structured", True)
    if not isinstance(structured, bool):
        raise fail("must be true or false", "structured")
    return JudgeSpec(
        name=name,
        url=texts["url"],
        model=texts["model"],
        api_key=api_key,
        prompt=prompt,
        prompt_file=prompt_file,
        scale=(scale[0], scale[1]),
        temperature=numbers.get("temperature", 0.0),
        concurrency=int(numbers.get("concurrency", 2)),
        budget=int(numbers.get("budget", 1000)),
        timeout=numbers.get("timeout", 60.0),
        retries=int(numbers.get("retries", 3)),
        time_limit=numbers.get("time_limit"),
        min_kappa=numbers.get("min_kappa", 0.4),
        headers=dict(headers),
        structured=structured,
    )


def _number(
    value: Any,
    key: str,
    fail: Fail,
    whole: bool,
    minimum: float | None,
    above: float | None,
    maximum: float,
) -> float:
    """A numeric key checked with ``check_number``; a whole one must be a TOML integer."""
    wrong = isinstance(value, bool) or (whole and not isinstance(value, int))
    if wrong or not isinstance(value, int | float):
        raise fail("must be a whole number" if whole else "must be a number", key)
    try:
        return float(check_number(value, key, minimum=minimum, above=above, maximum=maximum))
    except InputError as error:
        raise fail(error.problem, key) from None


def url_problem(url: str) -> str | None:
    """Why ``url`` is no usable http(s) URL, or None."""
    import httpx

    example = 'must be an http(s) URL, e.g. "http://127.0.0.1:11434/v1"'
    if not url.startswith(("http://", "https://")):
        return example
    if CONTROL.search(url) or any(c.isspace() for c in url):
        return f"{example}; {shown(url)} holds whitespace or a control character"
    try:
        parsed = httpx.URL(url)
        port = parsed.port
    except (httpx.InvalidURL, ValueError) as error:
        return f"{example}; {shown(url)}: {error}"
    if not parsed.host:
        return f"{example}; {shown(url)} names no host"
    if port is not None and not 1 <= port <= 65535:
        return f"{example}; port {port} is not from 1 to 65535"
    return None


def find_judge(judges: tuple[JudgeSpec, ...], name: str, project: Path) -> JudgeSpec:
    """The judge called ``name``; an InputError listing the known ones otherwise."""
    for judge in judges:
        if judge.name == name:
            return judge
    known = ", ".join(j.name for j in judges) or "none"
    raise InputError(f"no judge named '{name}' in [[judges]] (known: {known})", path=project)
