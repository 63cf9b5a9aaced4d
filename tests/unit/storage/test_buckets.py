"""The directory standing in for S3 buckets: objects written whole, listed by prefix, failures as FailureCodes."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from dynastore.storage.buckets import BucketError, DirectoryBuckets


def test_objects_are_written_read_and_listed_by_prefix(tmp_path: Path) -> None:
    (tmp_path / "bkt").mkdir()
    buckets = DirectoryBuckets(tmp_path)
    etag = buckets.put_object("bkt", "p/AWSDynamoDB/1/data/a.json.gz", b"abc")
    assert etag == "900150983cd24fb0d6963f7d28e17f72"
    buckets.put_object("bkt", "p/AWSDynamoDB/1/manifest-files.json", b"{}")
    buckets.put_object("bkt", "q/other", b"x")
    assert buckets.get_object("bkt", "p/AWSDynamoDB/1/data/a.json.gz") == b"abc"
    assert list(buckets.list_keys("bkt", "p/")) == [
        ("p/AWSDynamoDB/1/data/a.json.gz", 3),
        ("p/AWSDynamoDB/1/manifest-files.json", 2),
    ]
    assert [key for key, _ in buckets.list_keys("bkt", "")] == [
        "p/AWSDynamoDB/1/data/a.json.gz",
        "p/AWSDynamoDB/1/manifest-files.json",
        "q/other",
    ]


def test_a_missing_bucket_is_s3_s_no_such_bucket(tmp_path: Path) -> None:
    buckets = DirectoryBuckets(tmp_path)
    for call in (
        lambda: buckets.put_object("nobucket", "k", b""),
        lambda: buckets.get_object("nobucket", "k"),
        lambda: list(buckets.list_keys("nobucket", "")),
    ):
        with pytest.raises(BucketError) as e:
            call()
        assert e.value.code == "S3NoSuchBucket"
        assert e.value.message == "The specified bucket does not exist: nobucket"


def test_keys_cannot_leave_their_bucket(tmp_path: Path) -> None:
    (tmp_path / "bkt").mkdir()
    buckets = DirectoryBuckets(tmp_path)
    with pytest.raises(BucketError) as e:
        buckets.put_object("bkt", "../escape", b"x")
    assert e.value.code == "S3NoSuchKey"
    assert not (tmp_path / "escape").exists()


def test_a_full_disk_is_a_clear_write_failure_and_leaves_no_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bkt").mkdir()
    buckets = DirectoryBuckets(tmp_path)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(BucketError) as e:
        buckets.put_object("bkt", "data/a.json.gz", b"abc")
    assert e.value.code == "S3WriteFailed"
    assert e.value.message == "Writing bkt/data/a.json.gz failed: No space left on device"
    assert list(buckets.list_keys("bkt", "")) == []
