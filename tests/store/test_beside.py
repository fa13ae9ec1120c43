"""What a second process needs: the URL that opens the same store, where there is one."""

from __future__ import annotations

from pathlib import Path

from evalplat.store import Store
from evalplat.store.beside import cores, reopenable_url


def test_a_store_in_memory_cannot_be_opened_by_another_process(tmp_path: Path) -> None:
    with Store.init("sqlite://") as memory:
        assert reopenable_url(memory) is None
    with Store.init(f"sqlite:///{tmp_path / 'file.db'}") as file:
        assert reopenable_url(file) == f"sqlite:///{tmp_path / 'file.db'}"
    assert cores() >= 1
