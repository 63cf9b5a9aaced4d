"""The file formats of export and import, as DynamoDB writes and reads them.

Data files hold one item per line:

* DYNAMODB_JSON: ``{"Item":{...}}`` (the item in DynamoDB's marshalled JSON);
* ION: ``$ion_1_0 {Item:{...}}`` (Amazon Ion text: S string, N decimal, B blob, BOOL bool, NULL null, L list,
  M struct, SS/NS/BS lists annotated ``$dynamodb_SS`` / ``$dynamodb_NS`` / ``$dynamodb_BS``);
* CSV (import only): a header line naming the columns (or ``HeaderList``), then one item per line; every value a
  string, except the key attributes of the table and its GSIs, which take their defined types.

An incremental export's lines hold a change instead of an item: ``Metadata`` (``WriteTimestampMicros``),
``Keys``, ``NewImage`` (absent for a delete) and, with NEW_AND_OLD_IMAGES, ``OldImage`` (absent for an insert).

Readers never raise for bad data: they yield a ``LineError`` naming the line, and the import counts it and goes
on with the next line, as DynamoDB does.
"""

from __future__ import annotations

import base64
import csv
import gzip
import io
import zlib
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import orjson

from dynastore import messages
from dynastore.errors import DynamoError
from dynastore.model.values import Item
from dynastore.validation.attribute_values import invalid_entry

__all__ = [
    "CsvOptions",
    "FormatError",
    "LineError",
    "change_line",
    "compress",
    "data_file_suffix",
    "decompress",
    "item_line",
    "read_items",
]

DYNAMODB_JSON = "DYNAMODB_JSON"
ION = "ION"
CSV = "CSV"
_SET_ANNOTATIONS = {"SS": "$dynamodb_SS", "NS": "$dynamodb_NS", "BS": "$dynamodb_BS"}
_SET_OF_ANNOTATION = {annotation: kind for kind, annotation in _SET_ANNOTATIONS.items()}


class FormatError(Exception):
    """A whole object that cannot be read (bad compression): ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LineError:
    """One line of an import file that could not become an item."""

    __slots__ = ("line", "message")

    def __init__(self, line: int, message: str) -> None:
        self.line = line  # 1-based, as editors count
        self.message = message

    def __repr__(self) -> str:
        return f"LineError({self.line}, {self.message!r})"


class CsvOptions:
    __slots__ = ("delimiter", "header")

    def __init__(self, delimiter: str = ",", header: Sequence[str] | None = None) -> None:
        self.delimiter = delimiter
        self.header = tuple(header) if header else None  # None: the file's first line names the columns


# ---------------------------------------------------------------------------------------------- compression


def data_file_suffix(fmt: str) -> str:
    """The name ending of an export's data files (always gzip-compressed, as DynamoDB writes them)."""
    return ".ion.gz" if fmt == ION else ".json.gz"


def compress(data: bytes, compression: str) -> bytes:
    if compression == "GZIP":
        return gzip.compress(data, compresslevel=6, mtime=0)
    if compression == "ZSTD":
        import zstandard

        return bytes(zstandard.ZstdCompressor().compress(data))
    return data


def decompress(data: bytes, compression: str) -> bytes:
    """The object's content; FormatError when it is not compressed as said."""
    try:
        if compression == "GZIP":
            return gzip.decompress(data)
        if compression == "ZSTD":
            import zstandard

            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
                content: bytes = reader.read()  # typed here: a build without zstandard's stubs sees Any
                return content
    except (OSError, EOFError, zlib.error) as e:
        raise FormatError(messages.IMPORT_BAD_COMPRESSION.format(compression=compression, detail=e)) from None
    except Exception as e:  # zstandard.ZstdError has no importable base without the module
        raise FormatError(messages.IMPORT_BAD_COMPRESSION.format(compression=compression, detail=e)) from None
    return data


# ---------------------------------------------------------------------------------------------- writers


def item_line(fmt: str, item_json: bytes | memoryview) -> bytes:
    """One line of a full export: the stored item's JSON (itemcodec) wrapped as DynamoDB writes it."""
    if fmt == ION:
        return _ion_line({"Item": _to_ion_map(orjson.loads(item_json))})
    return b'{"Item":' + bytes(item_json) + b"}\n"


def change_line(fmt: str, keys: Item, old: Item | None, new: Item | None, view: str, write_micros: int) -> bytes:
    """One line of an incremental export: a change of one item between the export's from and to times."""
    record: dict[str, Any] = {"Metadata": {"WriteTimestampMicros": {"N": str(write_micros)}}, "Keys": keys}
    if new is not None:
        record["NewImage"] = new
    if old is not None and view == "NEW_AND_OLD_IMAGES":
        record["OldImage"] = old
    if fmt == ION:
        return _ion_line(
            {
                name: _to_ion_map(value) if name != "Metadata" else {"WriteTimestampMicros": Decimal(write_micros)}
                for name, value in record.items()
            }
        )
    return orjson.dumps(record) + b"\n"


def _ion_line(value: dict[str, Any]) -> bytes:
    from amazon.ion import simpleion

    text: str = simpleion.dumps(value, binary=False)
    return text.encode() + b"\n"


def _to_ion_map(item: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _to_ion(value) for name, value in item.items()}


def _to_ion(value: Mapping[str, Any]) -> Any:
    from amazon.ion.core import IonType
    from amazon.ion.simple_types import IonPyBytes, IonPyList, IonPyNull

    kind, payload = next(iter(value.items()))
    if kind == "S" or kind == "BOOL":
        return payload
    if kind == "N":
        return Decimal(payload)
    if kind == "B":
        return IonPyBytes.from_value(IonType.BLOB, base64.b64decode(payload))
    if kind == "NULL":
        return IonPyNull.from_value(IonType.NULL, None)
    if kind == "L":
        return [_to_ion(member) for member in payload]
    if kind == "M":
        return _to_ion_map(payload)
    members: list[Any]
    if kind == "NS":
        members = [Decimal(member) for member in payload]
    elif kind == "BS":
        members = [IonPyBytes.from_value(IonType.BLOB, base64.b64decode(member)) for member in payload]
    else:
        members = list(payload)
    return IonPyList.from_value(IonType.LIST, members, annotations=(_SET_ANNOTATIONS[kind],))


# ---------------------------------------------------------------------------------------------- readers


def read_items(
    fmt: str, content: bytes, csv_options: CsvOptions | None, typed_columns: Mapping[str, str]
) -> Iterator[tuple[int, Item | LineError]]:
    """``(line number, item or LineError)`` for every non-blank line of an import object's content.
    ``typed_columns``: for CSV, the type (S, N or B) of each key attribute of the table and its GSIs."""
    if fmt == CSV:
        yield from _csv_items(content, csv_options or CsvOptions(), typed_columns)
        return
    parse = _ion_item if fmt == ION else _json_item
    for number, line in enumerate(content.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            item = parse(line)
        except _BadLine as e:
            yield number, LineError(number, e.message)
            continue
        problem = _item_problem(item)
        yield number, (item if problem is None else LineError(number, problem))


class _BadLine(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _item_problem(item: Item) -> str | None:
    """DynamoDB's text for the first malformed attribute of ``item`` (numbers are canonicalised in place)."""
    if not item:
        return messages.IMPORT_EMPTY_ITEM
    try:
        problem = invalid_entry(item)
    except DynamoError as e:  # a value too large for DynamoDB's number range, found while canonicalising
        return e.message or type(e).__name__
    return None if problem is None else f"{problem[0]}: {problem[1]}"


def _json_item(line: bytes) -> Item:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise _BadLine(messages.IMPORT_BAD_JSON.format(detail=e)) from None
    item = record.get("Item") if isinstance(record, dict) else None
    if not isinstance(item, dict):
        raise _BadLine(messages.IMPORT_NO_ITEM)
    return item


def _ion_item(line: bytes) -> Item:
    from amazon.ion import simpleion

    try:
        record = simpleion.loads(line.decode("utf-8"))
    except Exception as e:  # the Ion reader raises plain exceptions of several kinds for bad text
        raise _BadLine(messages.IMPORT_BAD_ION.format(detail=e)) from None
    item = record.get("Item") if isinstance(record, Mapping) else None
    if not isinstance(item, Mapping):
        raise _BadLine(messages.IMPORT_NO_ITEM)
    try:
        return {str(name): _from_ion(value) for name, value in item.items()}
    except _BadLine:
        raise
    except (TypeError, ValueError) as e:
        raise _BadLine(messages.IMPORT_BAD_ION.format(detail=e)) from None


def _from_ion(value: Any) -> dict[str, Any]:
    from amazon.ion.core import IonType

    ion_type = getattr(value, "ion_type", None)
    annotations = [getattr(token, "text", token) for token in getattr(value, "ion_annotations", ())]
    if ion_type is IonType.NULL or value is None:
        return {"NULL": True}
    if ion_type is IonType.BOOL or isinstance(value, bool):
        return {"BOOL": bool(value)}
    if ion_type in (IonType.DECIMAL, IonType.INT, IonType.FLOAT) or isinstance(value, int | Decimal | float):
        return {"N": repr(value) if isinstance(value, float) else str(value)}
    if ion_type in (IonType.STRING, IonType.SYMBOL) or isinstance(value, str):
        return {"S": str(value)}
    if ion_type in (IonType.BLOB, IonType.CLOB) or isinstance(value, bytes):
        return {"B": base64.b64encode(bytes(value)).decode()}
    if ion_type is IonType.STRUCT or isinstance(value, Mapping):
        return {"M": {str(name): _from_ion(member) for name, member in value.items()}}
    if ion_type in (IonType.LIST, IonType.SEXP) or isinstance(value, list):
        kind = next((_SET_OF_ANNOTATION[a] for a in annotations if a in _SET_OF_ANNOTATION), None)
        if kind is None:
            return {"L": [_from_ion(member) for member in value]}
        members = [_from_ion(member) for member in value]
        scalar = kind[0]
        if any(scalar not in member for member in members):
            raise _BadLine(messages.IMPORT_ION_SET_MEMBER.format(kind=kind))
        return {kind: [member[scalar] for member in members]}
    raise _BadLine(messages.IMPORT_ION_TYPE.format(ion_type=getattr(ion_type, "name", type(value).__name__)))


def _csv_items(
    content: bytes, options: CsvOptions, typed_columns: Mapping[str, str]
) -> Iterator[tuple[int, Item | LineError]]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        yield 1, LineError(1, messages.IMPORT_BAD_UTF8.format(detail=e))
        return
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=options.delimiter)
    header = list(options.header) if options.header else None
    for row in rows:
        number = rows.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if header is None:
            header = row
            continue
        if len(row) != len(header):
            yield number, LineError(number, messages.IMPORT_CSV_COLUMNS.format(found=len(row), expected=len(header)))
            continue
        item = _csv_item(header, row, typed_columns)
        problem = _item_problem(item)
        yield number, (item if problem is None else LineError(number, problem))


def _csv_item(header: Sequence[str], row: Sequence[str], typed_columns: Mapping[str, str]) -> Item:
    """A row as an item: key columns of their defined types, every other non-empty column a string (an empty
    column is left out: DynamoDB stores no empty attribute for it)."""
    item: Item = {}
    for name, text in zip(header, row, strict=True):
        kind = typed_columns.get(name, "S")
        if text == "" and kind == "S" and name not in typed_columns:
            continue
        item[name] = {kind: text}
    return item
