"""storage/backup_files.py: images and records sealed under their names, read back as written; a torn or
unsealed image never passes for a whole one; a full disk is a clear StorageUnavailableError."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynastore.storage.backup_files import BackupFiles, ImageWriter
from dynastore.storage.itemcodec import encode_item
from dynastore.storage.kv import StorageCorruptionError, StorageUnavailableError

VALUES = [encode_item({"pk": {"S": f"k{i}"}, "v": {"S": "x" * i}}, 10 + i) for i in range(50)]


@pytest.fixture(params=["disk", "memory"])
def files(request: pytest.FixtureRequest, tmp_path: Path) -> BackupFiles:
    return BackupFiles.open(tmp_path if request.param == "disk" else None)


def write(files: BackupFiles, name: str, values: list[bytes]) -> ImageWriter:
    writer = files.write_image(name, {"table": {"name": "t"}, "seq": 7, "taken_at": 1.5})
    for value in values:
        writer.add(value)
    writer.finish()
    writer.seal()
    return writer


def test_an_image_reads_back_its_header_and_items(files: BackupFiles) -> None:
    writer = write(files, "one", VALUES)
    assert (writer.item_count, writer.size_bytes) == (50, sum(10 + i for i in range(50)))
    assert files.read_header("one") == {"table": {"name": "t"}, "seq": 7, "taken_at": 1.5}
    assert list(files.items("one")) == VALUES
    assert files.has_image("one") and files.verify("one")
    files.delete_image("one")
    assert not files.has_image("one")


def test_an_image_is_not_there_until_sealed(files: BackupFiles) -> None:
    writer = files.write_image("two", {"seq": 1})
    writer.add(VALUES[0])
    assert not files.has_image("two")
    writer.discard()
    assert not files.has_image("two")


def test_records_are_kept_by_name(files: BackupFiles) -> None:
    files.put_record("a", {"status": "CREATING"})
    files.put_record("a", {"status": "AVAILABLE"})
    files.put_record("b", {"status": "AVAILABLE", "n": 2})
    assert files.records() == {"a": {"status": "AVAILABLE"}, "b": {"status": "AVAILABLE", "n": 2}}
    files.delete_record("a")
    assert list(files.records()) == ["b"]


def test_a_torn_image_is_refused(tmp_path: Path) -> None:
    files = BackupFiles.open(tmp_path)
    write(files, "one", VALUES)
    path = tmp_path / "backups" / "one.image"
    path.write_bytes(path.read_bytes()[:-30])
    assert not files.verify("one")
    with pytest.raises(StorageCorruptionError, match="truncated"):
        list(files.items("one"))


def test_an_image_whose_items_do_not_match_the_trailer_is_refused(tmp_path: Path) -> None:
    files = BackupFiles.open(tmp_path)
    write(files, "one", VALUES)
    path = tmp_path / "backups" / "one.image"
    data = bytearray(path.read_bytes())
    data[200] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(StorageCorruptionError, match="does not match its trailer"):
        list(files.items("one"))


def test_temporary_files_left_by_a_crash_are_removed_at_open(tmp_path: Path) -> None:
    files = BackupFiles.open(tmp_path)
    write(files, "whole", VALUES[:3])
    # what a process killed while writing leaves: an image and a record never renamed to their names
    (tmp_path / "backups" / "torn.image.tmp").write_bytes(b"DYNASTORE-IMAGE-1\n\x00")
    (tmp_path / "backups" / "torn.json.tmp").write_bytes(b"{")
    BackupFiles.open(tmp_path)
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == ["whole.image"]


def test_a_full_disk_is_a_clear_error(tmp_path: Path) -> None:
    files = BackupFiles.open(tmp_path)
    with (
        open("/dev/full", "wb", buffering=0) as full,
        pytest.raises(StorageUnavailableError, match="^the backup image could not be written: No space left"),
    ):
        ImageWriter(files, "x", full, {"seq": 1})
