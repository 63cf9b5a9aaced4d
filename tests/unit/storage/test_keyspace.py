"""The key layout: tags never collide, reserved record names never meet a table's, key shapes, segments."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynastore.storage import keycodec as kc
from dynastore.storage import keyspace as ks
from dynastore.validation.shapes import TABLE_NAME_PATTERN

# ---------------------------------------------------------------- tags


def test_tags_are_distinct_and_none_is_a_prefix_of_another() -> None:
    assert len(set(ks.ALL_TAGS)) == len(ks.ALL_TAGS)
    for a in ks.ALL_TAGS:
        assert a
        for b in ks.ALL_TAGS:
            if a is not b:
                assert not b.startswith(a), f"tag {a!r} is a prefix of tag {b!r}"


def test_every_tag_constant_is_listed() -> None:
    # a new tag added to the module but not to ALL_TAGS would escape the collision test above
    declared = {name: value for name, value in vars(ks).items() if name.endswith(("_TAG", "_PREFIX"))}
    tags = {name: value for name, value in declared.items() if isinstance(value, bytes)}
    assert set(tags.values()) == set(ks.ALL_TAGS)


def test_tag_ranges_are_disjoint() -> None:
    # what a range scan over one tag covers: [tag, prefix_end(tag)) holds no other tag's keys
    for a in ks.ALL_TAGS:
        for b in ks.ALL_TAGS:
            if a is not b:
                assert not a <= b + b"\x00" < ks.prefix_end(a)


def test_token_keys_sit_under_one_letter_apart_from_the_other_tags() -> None:
    assert ks.TOKEN_PREFIX[:1] == ks.TOKEN_EXPIRY_PREFIX[:1] == b"T"
    assert b"T" not in {t for t in ks.ALL_TAGS if len(t) == 1}


# ---------------------------------------------------------------- reserved record names


def test_reserved_names_can_never_be_a_table_name() -> None:
    assert re.fullmatch(TABLE_NAME_PATTERN, "a" + ks.RESERVED_NAME_MARK) is None
    for name in ks.RESERVED_RECORD_NAMES + ks.RESERVED_RECORD_PREFIXES:
        assert name.startswith(ks.RESERVED_NAME_MARK)
        assert re.fullmatch(TABLE_NAME_PATTERN, name) is None


def test_reserved_names_do_not_collide() -> None:
    names = ks.RESERVED_RECORD_NAMES + ks.RESERVED_RECORD_PREFIXES
    assert len(set(names)) == len(names)
    for prefix in ks.RESERVED_RECORD_PREFIXES:
        for other in names:
            if other is not prefix:
                assert not other.startswith(prefix) and not prefix.startswith(other)


def test_every_reserved_name_constant_is_listed() -> None:
    strings = {v for k, v in vars(ks).items() if k.isupper() and isinstance(v, str) and k != "RESERVED_NAME_MARK"}
    assert strings == set(ks.RESERVED_RECORD_NAMES + ks.RESERVED_RECORD_PREFIXES)


def test_reserved_record_keys() -> None:
    assert ks.capacity_record_key(258) == b"C#capacity:258"
    assert ks.backfill_cursor_key(7) == b"C#backfill:7"
    assert ks.meta_key(ks.SEQUENCE_RECORD) == b"C#seq"
    assert ks.meta_key(ks.PURGE_RECORD) == b"C#purge"


# ---------------------------------------------------------------- key shapes


def test_item_key_layout() -> None:
    h = kc.encode_value("S", "user#1")
    r = kc.encode_value("N", "7")
    key = ks.item_key(258, h, r)
    assert key[:5] == b"I\x00\x00\x01\x02" == ks.table_prefix(258)
    assert key[5:9] == ks.partition_hash(h)
    assert key == ks.hash_key_prefix(258, h) + r
    assert ks.item_key(258, h, None) == ks.hash_key_prefix(258, h)
    assert key.startswith(ks.table_prefix(258))
    assert ks.table_prefix(258) < key < ks.prefix_end(ks.table_prefix(258))


def test_item_and_index_prefixes_are_the_id_in_four_bytes_whether_remembered_or_not() -> None:
    ids = [0, 1, 255, 256, (1 << 32) - 1, *range(1000, 1000 + 3 * ks._PREFIXES_MAX)]  # more than the memo holds
    for _ in range(2):
        for number in ids:
            assert ks.table_prefix(number) == b"I" + number.to_bytes(4, "big")
            assert ks.index_prefix(number) == b"X" + number.to_bytes(4, "big")
    assert len(ks._ITEM_PREFIXES) <= ks._PREFIXES_MAX and len(ks._INDEX_PREFIXES) <= ks._PREFIXES_MAX


def test_index_key_layout() -> None:
    ih, ir = kc.encode_value("S", "g"), kc.encode_value("N", "1")
    h, r = kc.encode_value("S", "t"), kc.encode_value("S", "u")
    key = ks.index_key(5, ih, ir, h, r)
    assert key == ks.index_hash_key_prefix(5, ih) + ir + h + r
    assert key.startswith(ks.index_prefix(5)) and key[:1] == b"X"
    assert ks.index_key(5, ih, None, h, None) == ks.index_hash_key_prefix(5, ih) + h


def test_meta_key() -> None:
    assert ks.meta_key("table/x") == b"Ctable/x"
    assert ks.meta_key("t").startswith(ks.meta_prefix())


def test_prefix_end() -> None:
    assert ks.prefix_end(b"ab") == b"ac"
    assert ks.prefix_end(b"a\xff\xff") == b"b"
    with pytest.raises(ValueError):
        ks.prefix_end(b"\xff")


@given(st.binary(min_size=1, max_size=6).filter(lambda p: p.rstrip(b"\xff")), st.binary(max_size=6))
def test_prefix_end_bounds_every_extension(prefix: bytes, tail: bytes) -> None:
    end = ks.prefix_end(prefix)
    assert prefix + tail < end
    assert end > prefix and not end.startswith(prefix)


def test_partition_hash_spreads() -> None:
    hashes = [ks.partition_hash(kc.encode_value("N", str(i))) for i in range(4096)]
    assert all(len(h) == 4 for h in hashes)
    buckets = [0] * 16
    for h in hashes:
        buckets[h[0] >> 4] += 1
    assert min(buckets) > 150 and max(buckets) < 370


def test_partition_hash_is_blake2b_whether_remembered_or_not() -> None:
    keys = [kc.encode_value("S", f"k{i}") for i in range(3 * ks._HASHES_MAX)]  # more than the memo holds
    for _ in range(2):
        for key in keys:
            assert ks.partition_hash(key) == hashlib.blake2b(key, digest_size=4).digest()
    assert len(ks._HASHES) <= ks._HASHES_MAX


@settings(max_examples=200)
@given(st.integers(1, ks.MAX_SEGMENTS), st.data())
def test_segments_tile_the_hash_space(total: int, data: st.DataObject) -> None:
    prefix = ks.table_prefix(9)
    first_lo, _ = ks.segment_bounds(9, 0, total)
    _, last_hi = ks.segment_bounds(9, total - 1, total)
    assert first_lo == prefix + b"\x00\x00\x00\x00"
    assert last_hi == ks.prefix_end(prefix)
    indexes: list[int] | range
    if total <= 300:
        indexes = range(total - 1)
    else:
        indexes = data.draw(st.lists(st.integers(0, total - 2), min_size=1, max_size=30))
    for i in indexes:
        lo, hi = ks.segment_bounds(9, i, total)
        assert lo < hi
        assert hi == ks.segment_bounds(9, i + 1, total)[0]  # no gap, no overlap
    # every item key falls in exactly one segment
    for _ in range(10):
        hk = kc.encode_value("S", data.draw(st.text(max_size=5)))
        key = ks.item_key(9, hk, None)
        guess = int.from_bytes(key[5:9], "big") * total >> 32
        owners = [
            s
            for s in range(max(0, guess - 1), min(total, guess + 2))
            if ks.segment_bounds(9, s, total)[0] <= key < ks.segment_bounds(9, s, total)[1]
        ]
        assert len(owners) == 1


@pytest.mark.parametrize(("segment", "total"), [(0, 0), (1, 1), (-1, 4), (0, ks.MAX_SEGMENTS + 1)])
def test_segment_arguments_checked(segment: int, total: int) -> None:
    with pytest.raises(ValueError):
        ks.segment_bounds(1, segment, total)


def test_index_segments() -> None:
    lo, hi = ks.index_segment_bounds(3, 0, 1)
    assert lo == ks.index_prefix(3) + bytes(4) and hi == ks.prefix_end(ks.index_prefix(3))


def test_change_log_keys_iterate_in_sequence_order() -> None:
    assert ks.change_key(1) == b"H" + bytes(7) + b"\x01"
    assert ks.change_key(255) < ks.change_key(256) < ks.change_key(1 << 40)
    assert ks.change_key(3).startswith(ks.change_prefix())
    assert ks.gsi_pending_key(3) == b"Q" + bytes(7) + b"\x03"
    assert ks.gsi_pending_key(3).startswith(ks.gsi_pending_prefix())


def test_shard_record_keys_group_a_shard_in_sequence_order() -> None:
    key = ks.shard_record_key(7, 2, 300)
    assert key == b"S" + (7).to_bytes(4, "big") + (2).to_bytes(4, "big") + (300).to_bytes(8, "big")
    assert key.startswith(ks.shard_record_prefix(7, 2)) and key.startswith(ks.shard_records_of_table(7))
    assert ks.shard_record_key(7, 2, 299) < key < ks.shard_record_key(7, 3, 0)
    assert ks.shards_record_key(7) == b"C#shards:7"


def test_collection_key_layout() -> None:
    h = kc.encode_value("S", "p")
    assert ks.collection_key(258, h) == b"L\x00\x00\x01\x02" + h
    assert ks.collection_key(258, h).startswith(ks.collection_prefix(258))
    assert not ks.collection_key(258, h).startswith(ks.collection_prefix(2))


def test_key_head_is_where_the_partition_key_starts() -> None:
    h = kc.encode_value("N", "12")
    assert ks.item_key(1, h, None)[ks.KEY_HEAD_BYTES :] == h
    assert ks.index_key(1, h, None, b"", None)[ks.KEY_HEAD_BYTES :] == h
    assert kc.decode_value("N", ks.item_key(1, h, None), ks.KEY_HEAD_BYTES) == ("12", ks.KEY_HEAD_BYTES + len(h))
