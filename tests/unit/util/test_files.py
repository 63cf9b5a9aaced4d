"""util/files.py: private directories whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynastore.util.files import make_private_directory


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0o002)  # what a shared-group setup uses: mkdir alone would make 0775 directories
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_every_directory_made_is_0700(tmp_path: Path) -> None:
    make_private_directory(tmp_path / "a" / "b" / "data")
    assert [mode(tmp_path / p) for p in ("a", "a/b", "a/b/data")] == [0o700, 0o700, 0o700]


@pytest.mark.usefixtures("open_umask")
def test_existing_directories_keep_their_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    make_private_directory(shared / "data")
    make_private_directory(shared / "data")  # again: nothing to do
    assert (mode(shared), mode(shared / "data")) == (0o755, 0o700)


def test_a_file_in_the_way_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):
        make_private_directory(tmp_path / "file" / "data")
