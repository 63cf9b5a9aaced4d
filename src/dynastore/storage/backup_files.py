"""Where backups live beside the store: table images and the records that describe them (docs/backups.md).

On disk (a data directory) everything is under ``<data_dir>/backups/``; in memory (``--in-memory``) the same
files are held in memory and end with the process.

* An image (``<name>.image``) is one table as it was at one instant: a header (the source table's definition as
  the catalog stores it, the change-log position and the time it was taken at), then the table's items as their
  stored values (itemcodec bytes, which do not depend on the table id), then a trailer with their count and a
  checksum. It is written and read as a stream, never held whole in memory.
* A record (``<name>.json``) is a small JSON document (a backup's description and status).

Both are sealed the same way: written under a temporary name, fsynced, renamed to their own name, and the
directory fsynced; so a name exists only for a whole file, and whatever refers to it (a record saying AVAILABLE)
is written after it. A temporary file left by a crash is removed when the files are opened (``open``).
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from dynastore.storage.itemcodec import stored_size
from dynastore.storage.kv import StorageCorruptionError, StorageError, StorageUnavailableError
from dynastore.util.files import make_private_directory

__all__ = ["BACKUP_DIRECTORY", "BackupFiles", "ImageHeader", "ImageWriter"]

BACKUP_DIRECTORY = "backups"
_MAGIC = b"DYNASTORE-IMAGE-1\n"
_LENGTH = struct.Struct(">I")
_END = 0xFFFFFFFF  # a length no item has: the trailer follows
_TRAILER = struct.Struct(">QI")  # item count, crc32 of every item's bytes in order
_TEMPORARY = ".tmp"
_IMAGE = ".image"
_RECORD = ".json"
_WRITE_BUFFER = 1 << 20
FILE_MODE = 0o600

ImageHeader = dict[str, Any]
"""An image's header: ``table`` (the TableDef record), ``seq`` (change-log position), ``taken_at`` (time)."""


class ImageWriter:
    """Writes one image: ``add`` each stored item value, then ``seal`` (or ``discard`` on failure)."""

    def __init__(self, files: BackupFiles, name: str, stream: BinaryIO, header: ImageHeader) -> None:
        self._files = files
        self._name = name
        self._stream = stream
        self._crc = 0
        self.item_count = 0
        self.size_bytes = 0  # the items' DynamoDB sizes added up (what BackupSizeBytes reports)
        self.written_bytes = 0  # the image's bytes so far
        encoded = orjson.dumps(header)
        self._write(_MAGIC + _LENGTH.pack(len(encoded)) + encoded)

    def add(self, value: bytes) -> None:
        self._write(_LENGTH.pack(len(value)))
        self._write(value)
        self._crc = zlib.crc32(value, self._crc)
        self.item_count += 1
        self.size_bytes += stored_size(value)

    def finish(self) -> None:
        """Write the trailer and flush Python's buffer (cheap; ``seal`` does the blocking part)."""
        self._write(_LENGTH.pack(_END) + _TRAILER.pack(self.item_count, self._crc))
        try:
            self._stream.flush()
        except OSError as e:
            raise _write_error(e) from e

    def seal(self) -> None:
        """BLOCKING (fsync): make the finished image durable under its own name. Raises ``StorageError``."""
        self._files._seal_image(self._name, self._stream)

    def discard(self) -> None:
        """Drop the unfinished image (its temporary file)."""
        self._files._discard_image(self._name, self._stream)

    def sync(self) -> None:
        """BLOCKING: make what was written so far reach the disk now (a large image is written back in steps
        rather than all at once when sealed)."""
        try:
            self._stream.flush()
            if self._files.root is not None:
                os.fdatasync(self._stream.fileno())
        except OSError as e:
            raise _write_error(e) from e

    def _write(self, data: bytes) -> None:
        try:
            self._stream.write(data)
        except OSError as e:
            raise _write_error(e) from e
        self.written_bytes += len(data)


def _write_error(e: OSError) -> StorageError:
    """A full disk refuses the backup (nothing acknowledged is lost: only the image is); other errors too."""
    return StorageUnavailableError(f"the backup image could not be written: {e.strerror or e}")


class BackupFiles:
    """The images and records of one dynastore (``root``: its backups directory, None: held in memory)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._images: dict[str, bytes] = {}  # in memory: sealed images
        self._records: dict[str, bytes] = {}  # in memory: records

    @classmethod
    def open(cls, data_dir: Path | None) -> BackupFiles:
        """The backups beside the store in ``data_dir`` (None: in memory); temporary files a crash left behind
        are removed."""
        if data_dir is None:
            return cls(None)
        root = data_dir / BACKUP_DIRECTORY
        make_private_directory(root)
        for entry in root.iterdir():
            if entry.name.endswith(_TEMPORARY):
                entry.unlink(missing_ok=True)
        return cls(root)

    # ---- images ---------------------------------------------------------------------------------------------
    def write_image(self, name: str, header: ImageHeader) -> ImageWriter:
        if self.root is None:
            return ImageWriter(self, name, io.BytesIO(), header)
        try:
            stream = _create(self.root / (name + _IMAGE + _TEMPORARY), _WRITE_BUFFER)
        except OSError as e:
            raise _write_error(e) from e
        return ImageWriter(self, name, stream, header)

    def has_image(self, name: str) -> bool:
        if self.root is None:
            return name in self._images
        return (self.root / (name + _IMAGE)).exists()

    def read_header(self, name: str) -> ImageHeader:
        with self._open_image(name) as stream:
            return _read_header(stream)

    def items(self, name: str) -> Iterator[bytes]:
        """The image's stored item values in order, streamed; raises ``StorageCorruptionError`` at the end if
        the trailer does not match what was read."""
        with self._open_image(name) as stream:
            _read_header(stream)
            crc = 0
            count = 0
            while True:
                length = _LENGTH.unpack(_read_exactly(stream, _LENGTH.size))[0]
                if length == _END:
                    break
                value = _read_exactly(stream, length)
                crc = zlib.crc32(value, crc)
                count += 1
                yield value
            expected_count, expected_crc = _TRAILER.unpack(_read_exactly(stream, _TRAILER.size))
            if (count, crc) != (expected_count, expected_crc):
                raise StorageCorruptionError(f"backup image {name} does not match its trailer")

    def verify(self, name: str) -> bool:
        """Whether the image is whole (its trailer matches its items)."""
        try:
            for _ in self.items(name):
                pass
        except (StorageError, OSError, ValueError):
            return False
        return True

    def delete_image(self, name: str) -> None:
        if self.root is None:
            self._images.pop(name, None)
            return
        (self.root / (name + _IMAGE)).unlink(missing_ok=True)

    def _open_image(self, name: str) -> BinaryIO:
        if self.root is None:
            data = self._images.get(name)
            if data is None:
                raise StorageCorruptionError(f"backup image {name} is missing")
            return io.BytesIO(data)
        try:
            return open(self.root / (name + _IMAGE), "rb", buffering=_WRITE_BUFFER)  # noqa: SIM115
        except OSError as e:
            raise StorageCorruptionError(f"backup image {name} cannot be read: {e}") from e

    def _seal_image(self, name: str, stream: BinaryIO) -> None:
        if self.root is None:
            assert isinstance(stream, io.BytesIO)
            self._images[name] = stream.getvalue()
            return
        temporary = self.root / (name + _IMAGE + _TEMPORARY)
        try:
            os.fsync(stream.fileno())
            stream.close()
            os.replace(temporary, self.root / (name + _IMAGE))
            _sync_directory(self.root)
        except OSError as e:
            stream.close()
            temporary.unlink(missing_ok=True)
            raise _write_error(e) from e

    def _discard_image(self, name: str, stream: BinaryIO) -> None:
        with contextlib.suppress(OSError):  # a full disk may fail the last flush: the file goes anyway
            stream.close()
        if self.root is not None:
            (self.root / (name + _IMAGE + _TEMPORARY)).unlink(missing_ok=True)

    # ---- records --------------------------------------------------------------------------------------------
    def put_record(self, name: str, record: dict[str, Any]) -> None:
        """BLOCKING (fsync): store ``record`` under ``name``, sealed. Raises ``StorageError``."""
        data = orjson.dumps(record)
        if self.root is None:
            self._records[name] = data
            return
        temporary = self.root / (name + _RECORD + _TEMPORARY)
        try:
            with _create(temporary, -1) as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.root / (name + _RECORD))
            _sync_directory(self.root)
        except OSError as e:
            temporary.unlink(missing_ok=True)
            raise StorageUnavailableError(f"the backup record could not be written: {e.strerror or e}") from e

    def delete_record(self, name: str) -> None:
        if self.root is None:
            self._records.pop(name, None)
            return
        (self.root / (name + _RECORD)).unlink(missing_ok=True)
        _sync_directory(self.root)

    def records(self) -> dict[str, dict[str, Any]]:
        """Every record, by name (read once at start; the caller keeps them in memory afterwards)."""
        if self.root is None:
            return {name: orjson.loads(data) for name, data in self._records.items()}
        found: dict[str, dict[str, Any]] = {}
        for entry in sorted(self.root.iterdir()):
            if entry.name.endswith(_RECORD):
                try:
                    found[entry.name[: -len(_RECORD)]] = orjson.loads(entry.read_bytes())
                except (OSError, orjson.JSONDecodeError) as e:
                    raise StorageCorruptionError(f"backup record {entry.name} cannot be read: {e}") from e
        return found


def _create(path: Path, buffering: int) -> BinaryIO:
    """A new file readable by the server's user only (mode 0600, as every file of the data directory)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    return os.fdopen(fd, "wb", buffering=buffering)


def _read_header(stream: BinaryIO) -> ImageHeader:
    if _read_exactly(stream, len(_MAGIC)) != _MAGIC:
        raise StorageCorruptionError("not a dynastore backup image")
    length = _LENGTH.unpack(_read_exactly(stream, _LENGTH.size))[0]
    header: ImageHeader = orjson.loads(_read_exactly(stream, length))
    return header


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise StorageCorruptionError("backup image is truncated")
    return data


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
