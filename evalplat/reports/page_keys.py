"""Which pages of the report site are unchanged since it was last written, so they keep their
files instead of being gathered and rendered again.

A page's key is a digest of what identifies its content and of the code that makes it (a digest
of every module of evalplat, ``templates/`` and the versions of evalplat and Jinja2). What
identifies the content is, for the pages that are costly to gather (runs, comparisons, query
health, leaderboards), the stamps of what they show (``Store.site_stamps``: run rows, latest
evaluation ids, comparison ids and stored times, baselines, target checks), read before any of
their data; for the others (histories, the index, the online pages), their gathered data. The
site keeps the key of every page it wrote or kept in ``.page-keys.json`` next to ``index.html``.
A page whose key is the stored one and whose file is still there, with the size it was written
with, keeps that file: byte for byte what gathering and rendering it again would write, since
both are pure functions of what the key digests. Anything else (no key file, a file deleted or
edited, a new evalplat) renders the page.

A run page is the page that stays the same night after night: a config's last 30 runs each
have one, and only the newest is new.

A page can also be rendered ahead, by another process, before the site is written
(:class:`PageAhead`: a night renders each comparison's page beside the next config's run). The
site takes it in place of rendering its own when the material it was rendered from equals the
page's material now and the code that rendered it is this process's: then it is what rendering
it here would write.
"""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

KEYS_FILE = ".page-keys.json"


@dataclass(frozen=True)
class PageAhead:
    """A page rendered before the site is written: its path in the site, the material its key
    digests, the digest of the code that rendered it, and its HTML."""

    path: str
    material: object
    code: str
    html: str


class PageKeys:
    """The site's page keys as last written (read from ``out``) and as written now; ``ahead``:
    pages rendered ahead (``take_ahead``)."""

    def __init__(self, out: Path, ahead: Iterable[PageAhead] = ()) -> None:
        self.out = out
        self.old = _read(out / KEYS_FILE)
        self.ahead = {page.path: page for page in ahead}
        self.now: dict[str, list[object]] = {}
        self.rendered = 0
        self.kept = 0

    def write(self, path: str, material: object, render: Callable[[], str]) -> Path:
        """Write the page ``path`` (relative to the site) from ``render()`` unless its key
        (a digest of ``material`` and of the code) and its file are unchanged."""
        if not self.keep(path, material):
            self.put(path, material, render())
        return self.out / path

    def keep(self, path: str, material: object) -> bool:
        """Whether the page ``path`` keeps its file: its key and its file are unchanged (then
        it counts as written by this write of the site)."""
        key = page_key(material)
        old = self.old.get(path)
        if old is None or old[0] != key or _size(self.out / path) != old[1]:
            return False
        self.now[path] = old
        self.kept += 1
        return True

    def take_ahead(self, path: str, material: object) -> bool:
        """Write the page ``path`` from its HTML rendered ahead, when it was rendered from
        ``material`` by this code; False when there is no such page (render it)."""
        page = self.ahead.pop(path, None)
        if page is None or page.code != code_digest() or page.material != material:
            return False
        self.put(path, material, page.html)
        return True

    def put(self, path: str, material: object, html: str) -> Path:
        """Write the page ``path`` from ``html``, rendered from what ``material`` identifies."""
        from evalplat.reports.render import _write

        target = _write(self.out / path, html)
        self.now[path] = [page_key(material), _size(target)]
        self.rendered += 1
        return target

    def save(self) -> None:
        """Store the keys of the pages written or kept by this write of the site (a page
        the site no longer writes loses its key, so its file is rendered when it returns)."""
        self.out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.now, sort_keys=True, separators=(",", ":"))
        (self.out / KEYS_FILE).write_text(text + "\n", encoding="utf-8")


def page_key(material: object) -> str:
    """The digest of ``material`` (picklable stamps or page data, and links) and the code."""
    digest = hashlib.blake2b(code_digest().encode("ascii"), digest_size=20)
    digest.update(pickle.dumps(material, protocol=5))
    return digest.hexdigest()


@functools.cache
def code_digest() -> str:
    """Digest of what turns stored rows into HTML besides the rows: every module of evalplat
    (the store's reads and the comparison's computations shape a page as much as the report
    modules), the templates, and the versions of evalplat and Jinja2 (read once per process)."""
    import jinja2

    from evalplat import __version__
    from evalplat.resources import data_dir

    digest = hashlib.blake2b(f"{__version__} {jinja2.__version__}".encode(), digest_size=20)
    package, templates = Path(__file__).resolve().parent.parent, data_dir("templates")
    files = [(p.relative_to(package), p) for p in sorted(package.rglob("*.py"))]
    files += [(Path("templates", p.relative_to(templates)), p)
              for p in sorted(templates.rglob("*")) if p.is_file()]  # fmt: skip
    for name, path in files:
        digest.update(name.as_posix().encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _read(path: Path) -> dict[str, list[object]]:
    """The stored keys, or none when the file is missing or not ours (then every page is
    rendered, as on a first write)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(name): value
        for name, value in data.items()
        if isinstance(value, list) and len(value) == 2
    }


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None
