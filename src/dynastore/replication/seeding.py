"""What one node fetches from another beside forwarded requests: a copy of its store to seed a replica from
(docs/cluster.md "A replica that fell behind"), and read reports (replication/read_budget.py).

etcd keeps only the log's tail: entries every replica's store holds durably are forgotten. A node whose store
is older than the oldest entry etcd still holds (a new node, or one that was away long enough) cannot catch up
from the log; it fetches a copy of a follower's store instead, taken at a known log index, puts it in place of
its own and applies the log from that index on. A follower's store file holds exactly the entries it applied
(it applies each in a transaction of its own), so the copy's index is the follower's applied index when the copy
was taken.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import urllib.request
from typing import Any

from dynastore.replication.replicated_log import APPLIED_FILE, record_applied
from dynastore.storage.lmdb_kv import LmdbKV

__all__ = ["DATA_FILE", "INDEX_HEADER", "SECRET_HEADER", "discard_store", "fetch_image", "image_of", "post_json"]

log = logging.getLogger("dynastore")

INDEX_HEADER = "x-dynastore-log-index"  # the log index a store image holds
DATA_FILE = "data.mdb"  # LMDB's data file in a store's directory
FETCH_TIMEOUT = 600.0


def image_of(store: LmdbKV) -> bytes:
    """A compacted copy of ``store``'s file, as bytes."""
    with tempfile.TemporaryDirectory(prefix="dynastore-image-") as directory:
        store.copy_file(directory)
        with open(os.path.join(directory, DATA_FILE), "rb") as f:
            return f.read()


SECRET_HEADER = "x-dynastore-cluster-secret"


def fetch_image(url: str, data_dir: str, secret: str) -> int:
    """BLOCKING: download the store image a node at ``url`` serves and put it in place of the store in
    ``data_dir`` (whose store must be closed); returns the log index it holds. Raises OSError or ValueError."""
    request = urllib.request.Request(url.rstrip("/") + "/dynastore/cluster/image", headers={SECRET_HEADER: secret})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:
        index = int(response.headers[INDEX_HEADER])
        partial = os.path.join(data_dir, DATA_FILE + ".seed")
        with open(partial, "wb") as f:
            shutil.copyfileobj(response, f, 1 << 20)
            f.flush()
            os.fsync(f.fileno())
    os.replace(partial, os.path.join(data_dir, DATA_FILE))
    record_applied(data_dir, index)
    log.warning("this node's store was replaced by a copy from %s holding the cluster's log up to %d", url, index)
    return index


def discard_store(data_dir: str) -> None:
    """Throw away the store in ``data_dir`` (closed): it holds writes the log does not. The node then starts
    from an empty store at index 0."""
    for name in (DATA_FILE, APPLIED_FILE):
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(data_dir, name))
    log.error("this node's store held writes the cluster's log does not: it was thrown away")


def post_json(url: str, body: Any, secret: str, timeout: float = 2.0) -> Any:
    """BLOCKING: POST ``body`` as JSON to another node's cluster endpoint; its JSON answer. Raises OSError or
    ValueError."""
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={SECRET_HEADER: secret, "Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())
