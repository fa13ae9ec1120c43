"""A notice: what one channel is sent in one delivery — every alert event of a night, together.

A team reads one message per night per channel, listing each alert that opened, resolved or was
retired (regressions, drops that need judgments, runs that failed), rather than one message per
metric. A notice is built from the alert outbox (``evalplat.nightly.delivery``) and carries keys
that make a retried delivery harmless:

- ``key``, the notice's idempotency key: derived from its entries' keys, so a retry of the same
  notice has the same key (sent as the ``Idempotency-Key`` header to webhooks, in the JSON
  payloads, and as the e-mail ``Message-ID``);
- ``keys``, one per entry (an alert event x the channel), stable from the moment the event was
  written, so a receiver can also recognise one event across notices.

A notice of one entry renders exactly as that entry's ``AlertMessage``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from evalplat.alerts.message import AlertMessage
from evalplat.metrics.numbers import counted

# Words for the title's counts, per (kind, event): one of them, several of them. A retired
# alert of any kind counts as "retired".
_COUNT_WORDS = {
    ("regression", "opened"): ("regression opened", "regressions opened"),
    ("regression", "resolved"): ("regression resolved", "regressions resolved"),
    ("needs_judgments", "opened"): ("needs judgments", "need judgments"),
    ("needs_judgments", "resolved"): ("judged again", "judged again"),
    ("operational", "opened"): ("run failed", "runs failed"),
    ("operational", "resolved"): ("recovered", "recovered"),
    ("target", "opened"): ("target missed", "targets missed"),
    ("target", "resolved"): ("target met", "targets met"),
    ("drift", "opened"): ("drift", "drifts"),
    ("drift", "resolved"): ("drift ended", "drifts ended"),
}
_RETIRED = ("retired", "retired")


@dataclass(frozen=True)
class Notice:
    """The entries of one delivery, in the order they happened, and their idempotency keys."""

    entries: tuple[AlertMessage, ...]
    keys: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.entries:
            raise ValueError("a notice needs at least one alert message")
        if self.keys and len(self.keys) != len(self.entries):
            raise ValueError("a notice needs one key per entry, or none")

    @classmethod
    def of(cls, message: AlertMessage) -> Notice:
        """A notice of one message (``alerts test``, or a single event)."""
        return cls((message,))

    @property
    def key(self) -> str | None:
        """The notice's idempotency key: the same entries always give the same key."""
        if not self.keys:
            return None
        if len(self.keys) == 1:
            return self.keys[0]
        return hashlib.sha256("\n".join(self.keys).encode()).hexdigest()[:32]

    @property
    def event(self) -> str:
        """``opened`` when anything opened (the notice needs attention), else the first event."""
        events = [m.event for m in self.entries]
        return "opened" if "opened" in events else events[0]

    def title(self) -> str:
        if len(self.entries) == 1:
            return self.entries[0].title()
        # counted per wording, in the order each first happened: retired alerts of several
        # kinds are one count
        counts = Counter(_count_words(m.kind, m.event) for m in self.entries)
        parts = [counted(count, *words) for words, count in counts.items()]
        return "evalplat: " + ", ".join(parts)

    def text(self) -> str:
        if len(self.entries) == 1:
            return self.entries[0].text()
        rule = "─" * 40
        blocks = [m.text() for m in self.entries]
        return f"{self.title()}\n\n" + f"\n{rule}\n\n".join(blocks)

    def report(self) -> str | None:
        """A link for the whole notice: the first entry's report (the site's pages link on)."""
        for message in self.entries:
            if message.report:
                return message.report
        return None

    def index(self) -> str | None:
        """The report site's index, when the entries know it and it is not the report itself."""
        found = next((m.index for m in self.entries if m.index), None)
        return None if found == self.report() else found


def _count_words(kind: str, event: str) -> tuple[str, str]:
    """``regression opened``, ``recovered``, ``retired`` ...: how a title counts an event, for
    one and for several."""
    if event == "retired":
        return _RETIRED
    return _COUNT_WORDS.get((kind, event), (f"{kind} {event}", f"{kind} {event}"))
