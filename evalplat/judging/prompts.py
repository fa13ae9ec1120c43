"""What a judge is asked: the built-in UMBRELA-style prompt, or a team's own Jinja template.

The built-in prompt follows the method of UMBRELA (Upadhyay, Pradeep, Thakur, Craswell and
Lin, 2024, "UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing RELevance
Assessor", arXiv:2406.06519), which showed that a language model asked to reason about the
searcher's intent before grading on a four-point scale (0 unrelated, 1 related, 2 highly
relevant, 3 perfectly relevant) agrees with TREC assessors about as well as they agree with
each other on system rankings. The wording here is evalplat's own.

A custom prompt is a Jinja template file rendered in a sandbox (no attribute access to Python
internals, no file or network access) with ``query``, ``title``, ``text``, ``lowest`` and
``highest``; an undefined name is an error, never an empty string.

The **prompt hash** keys the judge's cache: sha256 over the template text, the scale, the
model and the temperature, so that changing any of them asks the model again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError

if TYPE_CHECKING:
    from evalplat.judging.spec import JudgeSpec

SYSTEM = (
    "You are a careful search quality rater. You judge how well a passage answers a search "
    "query, and you answer only in the format asked for."
)

UMBRELA = """\
A person typed the search query below and the search engine showed them the passage below.
Decide how useful the passage is to that person.

First think about what the person most likely wants to know or do. Then weigh how much of it
the passage gives them, and how much they could trust it.

Grade on this scale:
3 = the passage is about the query and fully answers it; nothing important is missing.
2 = the passage answers the query, but the answer is partial, unclear, or mixed with
    unrelated material.
1 = the passage is on the topic of the query but does not answer it.
0 = the passage has nothing to do with the query.

Query: {{ query }}

Passage:
{% if title %}{{ title }}
{% endif %}{{ text }}

Answer with the grade from {{ lowest }} to {{ highest }} and one short sentence saying why,
as JSON: {"grade": <{{ lowest }}-{{ highest }}>, "reason": "<why>"}"""


@dataclass(frozen=True)
class Prompt:
    """A compiled prompt template and its hash (module doc)."""

    source: str
    where: str  # "built-in prompt umbrela" or the template's path, for error messages
    hash: str
    template: Any

    def render(self, query: str, title: str, text: str, scale: tuple[int, int]) -> str:
        """The user message for one pair; an InputError naming the template when it fails."""
        try:
            return str(
                self.template.render(
                    query=query, title=title, text=text, lowest=scale[0], highest=scale[1]
                )
            )
        except Exception as error:  # jinja2's UndefinedError, SecurityError, TypeError, ...
            raise InputError(f"{self.where}: prompt failed to render: {error}") from None


def load_prompt(spec: JudgeSpec) -> Prompt:
    """The judge's prompt, compiled in a sandbox."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    if spec.prompt_file is None:
        source, where = UMBRELA, f"built-in prompt {spec.prompt}"
    else:
        where = str(spec.prompt_file)
        try:
            source = spec.prompt_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read the prompt: {error}", path=spec.prompt_file) from None
    environment = ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    try:
        template = environment.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        raise InputError(
            f"prompt template: {error.message}", path=spec.prompt_file, line=error.lineno
        ) from None
    return Prompt(source=source, where=where, hash=prompt_hash(source, spec), template=template)


def prompt_hash(source: str, spec: JudgeSpec) -> str:
    recipe = "\n".join(
        [
            "evalplat judge prompt v1",
            f"scale {spec.scale[0]} {spec.scale[1]}",
            f"model {spec.model}",
            f"temperature {spec.temperature!r}",
            source,
        ]
    )
    return hashlib.sha256(recipe.encode("utf-8")).hexdigest()


def text_hash(text: str) -> str:
    """sha256 of a query's or a document's text: the cache keys on texts, not ids."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
