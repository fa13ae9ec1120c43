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
    if len(name) > _NAME_LENGTH or not all(c.isalnum() or c in "-_." for c in name):
        raise fail(
            f"judge name must be at most {_NAME_LENGTH} letters, digits, '-', '_' or '.'", "name"
        )
    if not texts["url"].startswith(("http://", "https://")):
        raise fail('must be an http(s) URL, e.g. "http://127.0.0.1:11434/v1"', "url")
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
        or not 0 <= scale[0] < scale[1] <= 100
    ):
        raise fail("must be [lowest, highest] grades, e.g. [0, 3]", "scale")
    numbers = {}
    for key, default, lowest in (
        ("concurrency", 2, 1),
        ("budget", 1000, 0),
        ("retries", 3, 0),
    ):
        value = table.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
            raise fail(f"must be a whole number ≥ {lowest}", key)
        numbers[key] = value
    reals: dict[str, float | None] = {}
    for key, real_default in (("temperature", 0.0), ("timeout", 60.0), ("time_limit", None)):
        value = table.get(key, real_default)
        if value is not None and (
            not isinstance(value, int | float) or isinstance(value, bool) or value < 0
        ):
            raise fail("must be a number ≥ 0", key)
        reals[key] = None if value is None else float(value)
    min_kappa = table.get("min_kappa", 0.4)
    if not isinstance(min_kappa, int | float) or not -1 <= min_kappa <= 1:
        raise fail("must be a number between -1 and 1", "min_kappa")
    headers = table.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise fail("must be a table of strings", "headers")
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
        temperature=reals["temperature"] or 0.0,
        concurrency=numbers["concurrency"],
        budget=numbers["budget"],
        timeout=reals["timeout"] or 60.0,
        retries=numbers["retries"],
        time_limit=reals["time_limit"],
        min_kappa=float(min_kappa),
        headers=dict(headers),
        structured=structured,
    )


def find_judge(judges: tuple[JudgeSpec, ...], name: str, project: Path) -> JudgeSpec:
    """The judge called ``name``; an InputError listing the known ones otherwise."""
    for judge in judges:
        if judge.name == name:
            return judge
    known = ", ".join(j.name for j in judges) or "none"
    raise InputError(f"no judge named '{name}' in [[judges]] (known: {known})", path=project)
