"""Item versions and the conflict rule: last writer wins on the stamp, then on the region's name."""

from __future__ import annotations

from dynastore.global_tables import versions
from dynastore.global_tables.versions import Version, wins
from dynastore.storage import keyspace
from dynastore.storage.memory_kv import MemoryKV


def test_a_change_wins_over_no_version() -> None:
    assert wins(Version(1, "us-east-1", False), None)


def test_the_later_stamp_wins() -> None:
    older, newer = Version(10, "us-west-2", False), Version(11, "us-east-1", False)
    assert wins(newer, older)
    assert not wins(older, newer)


def test_equal_stamps_are_ordered_by_region() -> None:
    east, west = Version(10, "us-east-1", False), Version(10, "us-west-2", True)
    assert wins(west, east)
    assert not wins(east, west)


def test_the_same_version_again_does_not_win() -> None:
    version = Version(10, "us-east-1", False)
    assert not wins(version, Version(10, "us-east-1", False))


def test_a_tombstone_is_compared_like_any_version() -> None:
    tombstone = Version(20, "us-east-1", True)
    assert not wins(Version(19, "us-west-2", False), tombstone)
    assert wins(Version(21, "us-west-2", False), tombstone)


def test_a_version_is_stored_beside_the_item_under_the_v_tag() -> None:
    kv = MemoryKV()
    item_key = keyspace.item_key(7, b"\x01a\x00", None)
    with kv.write() as txn:
        versions.write(txn, item_key, Version(123, "eu-west-1", True))
    with kv.read() as txn:
        assert versions.read(txn, item_key) == Version(123, "eu-west-1", True)
        stored = dict(txn.iter_range(keyspace.version_prefix(7), keyspace.prefix_end(keyspace.version_prefix(7))))
    assert stored == {b"V" + item_key[1:]: b'[123,"eu-west-1",true]'}


def test_an_item_without_a_version_reads_none() -> None:
    with MemoryKV().read() as txn:
        assert versions.read(txn, keyspace.item_key(7, b"\x01a\x00", None)) is None
