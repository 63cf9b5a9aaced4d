"""A failed storage operation loses nothing: for each point of the write path, a fault is injected while
counters are incremented (each write computed from the one before it); every acknowledged write must then be
read back at once, survive kill -9 and a restart, and nothing answered with an error may be applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dynastore.config import Config
from dynastore.storage.catalog import Catalog
from dynastore.storage.kv import StorageError, StorageUnavailableError
from dynastore.storage.lmdb_kv import LmdbKV
from tests.unit.storage import fault_ledger
from tests.unit.storage.killed_writer import first_line_then_kill_9
from tests.unit.storage.test_catalog import table

# (point, calls before it fails, how many calls fail), with the batch's writes straight into it (the default),
# and a few with each in a child transaction of the batch (a store whose map has little room left)
CASES = [
    ("lmdb.commit", 3, 1),  # LMDB's batch commit (a full disk reported as EIO): the reported data loss
    ("lmdb.commit", 3, 20),  # ... failing on for a while: the store stays read-only until a retry commits
    ("wal.append", 25, 1),  # the log append (ENOSPC, a torn record left behind)
    ("wal.append", 25, 10),
    ("wal.sync", 2, 1),  # the log's sync before a batch commit
    ("sync.helper", 10, 1),  # the sync helper reports a failed fdatasync
    ("wal.rotate", 1, 3),  # a new log segment cannot be created (EMFILE)
    ("wal.truncate", 20, 2),  # the log cannot be cut back after a failed append: reads wait until it can
    ("lmdb.sync", 1, 1),  # a checkpoint's sync (off the write path: logged, the log keeps its segments)
]
CHILD_CASES = [("lmdb.commit", 3, 1), ("wal.append", 25, 10), ("sync.helper", 10, 1)]


@pytest.mark.parametrize(
    ("point", "after", "times", "direct"),
    [(*case, True) for case in CASES] + [(*case, False) for case in CHILD_CASES],
)
def test_a_storage_fault_loses_no_acknowledged_write(
    tmp_path: Path, point: str, after: int, times: int, direct: bool
) -> None:
    path = str(tmp_path / "db")
    line = first_line_then_kill_9(fault_ledger.script(path, point, after, times, direct=direct))
    report = json.loads(line)
    assert report["fired"] == times, report  # the fault happened
    assert report["mismatches"] == [], report  # no read missed an acknowledged write or saw a failed one
    assert report["stored"] == report["acked"], report
    assert report["writable"], report  # writes resumed by themselves ...
    assert set(report["acked"].values()) == {fault_ledger.ROUNDS}, report  # ... and every counter got its writes
    if point in ("wal.append", "wal.sync", "wal.truncate"):
        assert report["failed"] > 0, report  # writes in flight were taken back (and answered with an error)
    kv = LmdbKV(path, map_size=1 << 30)  # after kill -9: the log is replayed
    try:
        assert fault_ledger.stored(kv) == report["acked"]
    finally:
        kv.close()
    kv = LmdbKV(path, map_size=1 << 30)  # after a clean close
    try:
        assert fault_ledger.stored(kv) == report["acked"]
    finally:
        kv.close()
    print(
        f"{point} x{times} ({'direct' if direct else 'child'} writes): "
        f"acknowledged {sum(report['acked'].values())}, failed {report['failed']}, refused {report['refused']}, lost 0"
    )


def test_a_table_created_by_a_write_taken_back_is_gone_from_the_catalog(tmp_path: Path) -> None:
    faults = fault_ledger.PlannedFaults("wal.append", fault_ledger.FAULTS["wal.append"], after=1)
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30, faults=faults)
    kv.enable_batching(lambda: None)
    config = Config(data_dir=tmp_path / "db")
    catalog = Catalog.load(kv, config)
    kv.watch_losses(lambda durable, lost_through: catalog.reload())
    kept = catalog.create(table(catalog, "kept", 0.0))
    kv.seal()  # the first record is logged
    kv.flush()
    catalog.create(table(catalog, "lost", 0.0))
    with pytest.raises(StorageError):
        kv.seal()  # its record cannot be appended: the CreateTable is taken back
    found = catalog.find("kept")
    assert catalog.find("lost") is None and found is not None and found.table_id == kept.table_id
    assert not kv.writable
    with pytest.raises(StorageUnavailableError):
        kv.write()
    assert kv.retry_writes()
    assert catalog.next_table_id() > kept.table_id + 1  # the id handed out to the lost table is not reused
    kv.close()
    kv = LmdbKV(tmp_path / "db", map_size=1 << 30)
    assert Catalog.load(kv, config).list_names() == ["kept"]
    kv.close()
