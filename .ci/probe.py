"""One signed ListTables request to a fresh server, with the standard library only (the server's install has no
boto3): proves that what the README's install command started answers as DynamoDB does."""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import sys
import urllib.request
from urllib.parse import urlsplit

REGION = "us-east-1"


def _signed_headers(host: str, body: bytes, target: str) -> dict[str, str]:
    now = datetime.datetime.now(datetime.UTC)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    headers = {
        "content-type": "application/x-amz-json-1.0",
        "host": host,
        "x-amz-date": amz_date,
        "x-amz-target": target,
    }
    names = ";".join(sorted(headers))
    canonical = "\n".join(
        ["POST", "/", "", *(f"{k}:{headers[k]}" for k in sorted(headers)), "", names, hashlib.sha256(body).hexdigest()]
    )
    scope = f"{day}/{REGION}/dynamodb/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = b"AWS4" + b"dummy-secret"
    for part in (day, REGION, "dynamodb", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential=dummykey/{scope}, SignedHeaders={names}, Signature={signature}"
    )
    return headers


def main(url: str) -> None:
    body = b"{}"
    headers = _signed_headers(urlsplit(url).netloc, body, "DynamoDB_20120810.ListTables")
    request = urllib.request.Request(url + "/", data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    if answer != {"TableNames": []}:
        raise SystemExit(f"CI: ListTables on a new server answered {answer!r}")
    print(f"CI: {url} answered ListTables: {answer}")


if __name__ == "__main__":
    main(sys.argv[1])
