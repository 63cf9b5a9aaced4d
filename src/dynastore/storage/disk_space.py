"""A full disk: telling it from other storage failures, and the reserve file that lets the store recover from it.

The reserve is a preallocated file in the data directory. While the store is writable it just holds its space;
once a write fails on a full disk it is deleted, so that the deletes an operator sends to free space have room
for their log records and for the pages LMDB copies on write. It is made again (and writes resume) once the
file system has that much free space and as much again besides.

LMDB reports a write cut short by a full disk as EIO, so an error without ENOSPC counts as a full disk when the
file system has less than ``FULL_BELOW`` bytes free.
"""

from __future__ import annotations

import errno
import os

__all__ = ["FULL_BELOW", "Reserve", "free_bytes", "is_disk_full"]

FULL_BELOW = 1 << 20  # a file system with less free space than this is full, whatever the error said
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_CHUNK = 1 << 20  # the reserve is written in pieces of this size where fallocate is missing


def free_bytes(path: str) -> int:
    """Bytes an unprivileged process may still write in the file system of ``path`` (-1 if unknown)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return -1
    return st.f_bavail * st.f_frsize


def is_disk_full(error: BaseException, path: str) -> bool:
    """Whether ``error`` (a storage failure, with its causes) comes from a full file system at ``path``."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _FULL_ERRNOS:
            return True
        seen = seen.__cause__ or seen.__context__
    free = free_bytes(path)
    return 0 <= free < FULL_BELOW


class Reserve:
    """The reserve file at ``path`` of ``size`` bytes (0: none)."""

    __slots__ = ("path", "size")

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size

    def present(self) -> bool:
        return self.size <= 0 or os.path.exists(self.path)

    def make(self) -> None:
        """Create the reserve unless it exists. Raises ``OSError`` (ENOSPC on a full disk), leaving no file."""
        if self.present():
            return
        # Readable by the server's user only, as every file of the store.
        fd = os.open(self.path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            _allocate(fd, self.size)
            os.fsync(fd)
        except OSError:
            os.close(fd)
            os.unlink(self.path + ".new")
            raise
        os.close(fd)
        os.replace(self.path + ".new", self.path)

    def remake_if_room(self) -> bool:
        """Make the reserve again if the file system has room for it and as much again (so that writes have space
        besides it). True once it exists."""
        free = free_bytes(os.path.dirname(self.path) or ".")
        if self.size <= 0:
            return free < 0 or free >= FULL_BELOW
        if os.path.exists(self.path):
            return True
        if 0 <= free < 2 * self.size + FULL_BELOW:
            return False
        try:
            self.make()
        except OSError:
            return False
        return True

    def release(self) -> bool:
        """Delete the reserve to give its space to the store; True if there was one."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            return False
        return True


def _allocate(fd: int, size: int) -> None:
    allocate = getattr(os, "posix_fallocate", None)
    if allocate is not None:
        try:
            allocate(fd, 0, size)
            return
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                raise
    block = bytes(min(size, _CHUNK))
    written = 0
    while written < size:
        written += os.write(fd, block[: size - written])
