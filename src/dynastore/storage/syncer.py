"""A helper process that runs group commit's fsyncs, so that the server's process never waits for one.

Why a process and not a thread: a sync thread needs the interpreter lock to report each sync and to start the
next, and at a thousand syncs a second the lock's hand-overs between it and the busy event-loop thread cost
the server more CPU per write than the sync itself. The helper has its own interpreter; the server hands it a
request and learns of its completion through one socket that the event loop watches.

Protocol, over a Unix SEQPACKET socket pair (one message each way per request, in order):

* ``o<n>`` with one file descriptor attached: keep this descriptor as file ``n`` (a duplicate of the server's
  own, so a write-back error the kernel reports on the server's descriptor is reported on it too);
* ``x<n>``: close file ``n``;
* ``s <n> <n> ...``: sync each listed file in order (fsync for the directory, number -1, fdatasync for the
  others), then answer ``ok``, or ``error <text>`` at the first failure. A number the helper no longer has is
  skipped: the server drops a file only once its contents are durable elsewhere, and a request may still name
  it.

The helper exits when the server's end of the socket closes, also when the server is killed, and only then: it
ignores SIGINT and SIGTERM, which a terminal or a service manager may send to the server's whole process group.
"""

from __future__ import annotations

import socket
import subprocess
import sys

from dynastore.storage.kv import DurabilityError

__all__ = ["SyncProcess"]

_HELPER = r"""
import os, signal, socket, sys
# A Ctrl-C or a stop signal sent to the whole process group must not end the helper before the server has made
# its last writes durable; it ends when the server's end of the socket closes.
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sock = socket.socket(fileno=int(sys.argv[1]))
files = {}
while True:
    try:
        msg, fds, _, _ = socket.recv_fds(sock, 65536, 1)
    except OSError:
        break
    if not msg:
        break
    tag = msg[:1]
    if tag == b"o":
        files[int(msg[1:])] = fds[0]
    elif tag == b"x":
        fd = files.pop(int(msg[1:]), None)
        if fd is not None:
            os.close(fd)
    else:
        answer = b"ok"
        for token in msg.split()[1:]:
            number = int(token)
            fd = files.get(number)
            if fd is None:
                continue
            try:
                os.fsync(fd) if number < 0 else os.fdatasync(fd)
            except OSError as e:
                answer = b"error " + repr(e).encode()
                break
        try:
            sock.send(answer)
        except OSError:
            break
"""


class SyncProcess:
    """The helper process and the server's end of its socket."""

    @staticmethod
    def supported() -> bool:
        """Linux only (SEQPACKET sockets, fdatasync); elsewhere the server syncs from a worker thread."""
        return sys.platform == "linux"

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _HELPER, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as e:
            ours.close()
            raise DurabilityError(f"cannot start the sync helper: {e}") from e
        finally:
            theirs.close()
        self._sock = ours
        self._pending = False

    def fileno(self) -> int:
        """Readable once a requested sync has been answered."""
        return self._sock.fileno()

    def add_file(self, number: int, fd: int) -> None:
        """Let the helper sync ``fd`` as file ``number`` (it keeps its own duplicate)."""
        self._send_fds(b"o%d" % number, [fd])

    def drop_file(self, number: int) -> None:
        self._send(b"x%d" % number)

    def request(self, numbers: list[int]) -> None:
        """Ask for an fdatasync of each file, in order; ``answer()`` tells when it is done."""
        if self._pending:
            raise DurabilityError("a sync is already requested")
        self._send(b"s %d" % numbers[0] if len(numbers) == 1 else b" ".join([b"s", *(b"%d" % n for n in numbers)]))
        self._pending = True

    def answer(self) -> bool:
        """Non-blocking: True once the requested sync succeeded, False while it runs; raises ``DurabilityError``
        if it failed or the helper is gone."""
        if not self._pending:
            return False
        try:
            msg = self._sock.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError as e:
            raise DurabilityError(f"the sync helper cannot be reached: {e}") from e
        self._pending = False
        if msg == b"ok":
            return True
        if not msg:
            raise DurabilityError("the sync helper exited")
        raise DurabilityError(f"sync failed: {msg[6:].decode(errors='replace')}")

    def alive(self) -> bool:
        """Whether the helper process is still running."""
        return self._proc.poll() is None

    def close(self) -> None:
        """Stop the helper (it exits when its socket closes) and reap it."""
        self._sock.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def _send(self, msg: bytes) -> None:
        try:
            self._sock.send(msg)
        except OSError as e:
            raise DurabilityError(f"the sync helper cannot be reached: {e}") from e

    def _send_fds(self, msg: bytes, fds: list[int]) -> None:
        try:
            socket.send_fds(self._sock, [msg], fds)
        except OSError as e:
            raise DurabilityError(f"the sync helper cannot be reached: {e}") from e
