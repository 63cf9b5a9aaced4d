"""Where exports go and imports come from: S3 buckets, or a local directory standing in for them.

``Buckets`` is the little of S3 that export and import use: put an object, read one, list the keys under a
prefix. Two implementations:

* ``DirectoryBuckets(root)``: each bucket is a subdirectory of ``root`` and an object key a path under it, so
  export and import work with nothing else installed (``--s3-root``). An object is written to a temporary name,
  synced and renamed, so a crash never leaves half an object under its key.
* ``S3Buckets``: a real S3 or any S3-compatible server through boto3 (``--s3-endpoint-url``, region and
  credentials from flags or the usual AWS environment).

Every failure is a ``BucketError`` whose ``code`` is the FailureCode an export or import then ends with (S3's
error code prefixed with ``S3``, as DynamoDB reports them: ``S3NoSuchBucket``, ``S3AccessDenied``).
These calls block: callers run them in a worker thread, never on the event loop.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from dynastore.config import Config

__all__ = ["BucketError", "Buckets", "DirectoryBuckets", "S3Buckets", "buckets_of"]

NO_SUCH_BUCKET = "S3NoSuchBucket"
NO_SUCH_KEY = "S3NoSuchKey"
ACCESS_DENIED = "S3AccessDenied"
WRITE_FAILED = "S3WriteFailed"
_BUCKET_NAME = re.compile(r"[a-z0-9A-Z][.\-\w]*[a-z0-9A-Z]")


class BucketError(Exception):
    """An S3 call that failed: ``code`` is the FailureCode reported for it, ``str(self)`` its message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Buckets(Protocol):
    def put_object(self, bucket: str, key: str, data: bytes) -> str:
        """Store ``data`` as ``bucket``/``key``; return its ETag (the MD5 of the data, in hex)."""
        ...

    def get_object(self, bucket: str, key: str) -> bytes:
        """The object's bytes (BucketError S3NoSuchBucket / S3NoSuchKey)."""
        ...

    def list_keys(self, bucket: str, prefix: str) -> Iterator[tuple[str, int]]:
        """``(key, size)`` of every object whose key starts with ``prefix``, in key order."""
        ...


def buckets_of(config: Config) -> Buckets:
    """The buckets a server of ``config`` uses: the S3-compatible server of ``s3_endpoint_url`` ("aws": Amazon
    S3), else the directory ``s3_root``, else ``<data dir>/s3`` (in memory: ``dynastore-s3`` in the system's
    temporary directory). Nothing is created: a bucket is a directory someone made."""
    if config.s3_endpoint_url:
        return S3Buckets(
            None if config.s3_endpoint_url == "aws" else config.s3_endpoint_url,
            config.s3_region or config.region,
            config.s3_access_key_id or None,
            config.s3_secret_access_key or None,
        )
    if config.s3_root is not None:
        return DirectoryBuckets(config.s3_root)
    if config.in_memory:
        return DirectoryBuckets(Path(tempfile.gettempdir()) / "dynastore-s3")
    return DirectoryBuckets(config.data_dir / "s3")


class DirectoryBuckets:
    """Buckets as subdirectories of ``root``: ``root/<bucket>/<key>``. A bucket exists when its directory does
    (create it with ``mkdir``), as in S3 an export to a bucket nobody made fails."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _bucket(self, bucket: str) -> Path:
        if not _BUCKET_NAME.fullmatch(bucket) or ".." in bucket:
            raise BucketError(NO_SUCH_BUCKET, f"The specified bucket does not exist: {bucket}")
        path = self.root / bucket
        if not path.is_dir():
            raise BucketError(NO_SUCH_BUCKET, f"The specified bucket does not exist: {bucket}")
        return path

    def _object(self, bucket: str, key: str) -> Path:
        base = self._bucket(bucket)
        parts = [part for part in key.split("/") if part]
        if not parts or any(part in (".", "..") for part in parts):
            raise BucketError(NO_SUCH_KEY, f"The specified key does not exist: {key}")
        return base.joinpath(*parts)

    def put_object(self, bucket: str, key: str, data: bytes) -> str:
        import hashlib

        path = self._object(bucket, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".part-", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as e:
            raise BucketError(WRITE_FAILED, f"Writing {bucket}/{key} failed: {e.strerror or e}") from e
        return hashlib.md5(data, usedforsecurity=False).hexdigest()

    def get_object(self, bucket: str, key: str) -> bytes:
        path = self._object(bucket, key)
        try:
            return path.read_bytes()
        except FileNotFoundError as e:
            raise BucketError(NO_SUCH_KEY, f"The specified key does not exist: {key}") from e
        except OSError as e:
            raise BucketError(ACCESS_DENIED, f"Reading {bucket}/{key} failed: {e.strerror or e}") from e

    def list_keys(self, bucket: str, prefix: str) -> Iterator[tuple[str, int]]:
        base = self._bucket(bucket)
        found: list[tuple[str, int]] = []
        for directory, _, files in os.walk(base):
            for name in files:
                if name.startswith(".part-"):
                    continue  # an object being written (or left by a crash)
                path = Path(directory) / name
                key = path.relative_to(base).as_posix()
                if key.startswith(prefix):
                    found.append((key, path.stat().st_size))
        return iter(sorted(found))


class S3Buckets:
    """S3 or an S3-compatible server through boto3. ``endpoint_url`` None: AWS's own endpoint for ``region``;
    credentials None: boto3's usual chain (environment, shared files, instance roles)."""

    def __init__(
        self,
        endpoint_url: str | None,
        region: str,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
    ) -> None:
        self.endpoint_url = endpoint_url
        self.region = region
        self._access_key_id = access_key_id
        self._secret_access_key = secret_access_key
        self._client: Any = None

    def _s3(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config as BotoConfig

            self._client = boto3.session.Session().client(
                "s3",
                endpoint_url=self.endpoint_url,
                region_name=self.region,
                aws_access_key_id=self._access_key_id,
                aws_secret_access_key=self._secret_access_key,
                config=BotoConfig(s3={"addressing_style": "path"}, retries={"max_attempts": 3}),
            )
        return self._client

    def put_object(self, bucket: str, key: str, data: bytes) -> str:
        with _s3_errors(bucket, key):
            answer = self._s3().put_object(Bucket=bucket, Key=key, Body=data)
        return str(answer.get("ETag", "")).strip('"')

    def get_object(self, bucket: str, key: str) -> bytes:
        with _s3_errors(bucket, key):
            answer = self._s3().get_object(Bucket=bucket, Key=key)
            data = bytes(answer["Body"].read())
        return data

    def list_keys(self, bucket: str, prefix: str) -> Iterator[tuple[str, int]]:
        with _s3_errors(bucket, prefix):
            pages = self._s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            found = [(entry["Key"], int(entry["Size"])) for page in pages for entry in page.get("Contents", [])]
        return iter(found)


@contextmanager
def _s3_errors(bucket: str, key: str) -> Iterator[None]:
    """Translate botocore's failures into BucketError (the one boundary where they are seen)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as e:
        error = e.response.get("Error", {})
        code = str(error.get("Code") or "Unknown")
        message = str(error.get("Message") or code)
        if code in ("404", "NotFound"):
            code = "NoSuchKey"
        raise BucketError("S3" + code, message) from e
    except BotoCoreError as e:
        raise BucketError("S3ConnectionError", str(e)) from e
