"""The export and import file formats: lines as DynamoDB writes them, read back to the same items, and bad lines
reported by number instead of raising."""

from __future__ import annotations

import gzip

import orjson
import pytest
import zstandard
from amazon.ion import simpleion

from dynastore.engine.transfer_formats import (
    CsvOptions,
    FormatError,
    LineError,
    change_line,
    compress,
    decompress,
    item_line,
    read_items,
)

ITEM = {
    "Id": {"N": "103"},
    "Title": {"S": "Book 103 Title"},
    "Authors": {"SS": ["Author1", "Author2"]},
    "Ratings": {"NS": ["1", "2.5"]},
    "Covers": {"BS": ["AAE=", "AgM="]},
    "Cover": {"B": "AAEC"},
    "InPublication": {"BOOL": False},
    "Nothing": {"NULL": True},
    "Dimensions": {"M": {"Width": {"N": "8.5"}, "Tags": {"L": [{"S": "x"}, {"N": "-1E+3"}]}}},
}


def _json(item: dict[str, object]) -> bytes:
    return orjson.dumps(item)


def test_a_json_line_is_the_item_under_item() -> None:
    line = item_line("DYNAMODB_JSON", _json(ITEM))
    assert line.endswith(b"\n")
    assert orjson.loads(line) == {"Item": ITEM}


def test_an_ion_line_uses_dynamodb_s_types_and_set_annotations() -> None:
    line = item_line("ION", _json(ITEM)).decode()
    assert line.startswith("$ion_1_0 {Item:{")
    assert '$dynamodb_SS::["Author1","Author2"]' in line
    assert "$dynamodb_NS::[" in line and "$dynamodb_BS::[" in line
    value = simpleion.loads(line)
    assert str(value["Item"]["Id"]) == "103"
    assert value["Item"]["Cover"] == b"\x00\x01\x02"


@pytest.mark.parametrize("fmt", ["DYNAMODB_JSON", "ION"])
def test_what_is_written_reads_back_as_the_same_item(fmt: str) -> None:
    content = item_line(fmt, _json(ITEM)) + item_line(fmt, _json({"Id": {"N": "1"}}))
    read = list(read_items(fmt, content, None, {}))
    assert [number for number, _ in read] == [1, 2]
    first = read[0][1]
    assert isinstance(first, dict)
    assert first["Ratings"] == {"NS": ["1", "2.5"]}
    assert first["Dimensions"]["M"]["Tags"]["L"][1] == {"N": "-1000"}  # numbers canonicalised, as PutItem does
    assert {k: v for k, v in first.items() if k not in ("Dimensions",)} == {
        k: v for k, v in ITEM.items() if k not in ("Dimensions",)
    }


def test_the_guide_s_ion_example_reads_as_its_item() -> None:
    text = (
        b'$ion_1_0 {Item:{Authors:$dynamodb_SS::["Author1","Author2"],Dimensions:"8.5 x 11.0 x 1.5",'
        b'ISBN:"333-3333333333",Id:103.,InPublication:false,PageCount:6d2,Price:2d3,ProductCategory:"Book",'
        b'Title:"Book 103 Title"}}\n'
    )
    [(_, item)] = list(read_items("ION", text, None, {}))
    assert isinstance(item, dict)
    assert item["Authors"] == {"SS": ["Author1", "Author2"]}
    assert item["Id"] == {"N": "103"}
    assert item["PageCount"] == {"N": "600"}
    assert item["InPublication"] == {"BOOL": False}


def test_bad_lines_are_reported_by_number_and_the_good_ones_kept() -> None:
    content = b'{"Item":{"a":{"S":"1"}}}\nnot json\n{"Other":{}}\n\n{"Item":{"a":{"N":"x1"}}}\n{"Item":{"a":{"S":"5"}}}'
    read = list(read_items("DYNAMODB_JSON", content, None, {}))
    assert [number for number, _ in read] == [1, 2, 3, 5, 6]
    errors = {number: entry.message for number, entry in read if isinstance(entry, LineError)}
    assert set(errors) == {2, 3, 5}
    assert errors[2].startswith("Unparsable DynamoDB JSON: ")
    assert errors[3] == "The line is not an object with an Item member"
    assert errors[5].startswith("a: ")


def test_unparsable_ion_is_a_line_error() -> None:
    [(number, entry)] = list(read_items("ION", b"$ion_1_0 {Item:{a:", None, {}))
    assert number == 1
    assert isinstance(entry, LineError)
    assert entry.message.startswith("Unparsable Ion: ")


def test_csv_takes_the_header_line_and_types_the_key_columns() -> None:
    content = b"pk,year,title\nA,1999,Song\nB,2001,\n"
    read = list(read_items("CSV", content, None, {"pk": "S", "year": "N"}))
    assert read == [
        (2, {"pk": {"S": "A"}, "year": {"N": "1999"}, "title": {"S": "Song"}}),
        (3, {"pk": {"S": "B"}, "year": {"N": "2001"}}),
    ]


def test_csv_with_a_header_list_and_delimiter_reads_the_first_line_as_values() -> None:
    content = b"A;x\nB;y;z\n"
    read = list(read_items("CSV", content, CsvOptions(";", ["pk", "v"]), {"pk": "S"}))
    assert read[0] == (1, {"pk": {"S": "A"}, "v": {"S": "x"}})
    assert isinstance(read[1][1], LineError)
    assert read[1][1].message == "The line has 3 columns where the header names 2"


def test_a_csv_key_column_that_is_no_number_is_a_line_error() -> None:
    [(_, entry)] = list(read_items("CSV", b"pk,n\nA,abc\n", None, {"pk": "S", "n": "N"}))
    assert isinstance(entry, LineError)
    assert entry.message.startswith("n: ")


@pytest.mark.parametrize("compression", ["NONE", "GZIP", "ZSTD"])
def test_compression_round_trips(compression: str) -> None:
    data = b"line\n" * 1000
    packed = compress(data, compression)
    assert decompress(packed, compression) == data
    if compression == "GZIP":
        assert gzip.decompress(packed) == data
    if compression == "ZSTD":
        assert zstandard.ZstdDecompressor().decompressobj().decompress(packed) == data


@pytest.mark.parametrize("compression", ["GZIP", "ZSTD"])
def test_data_not_compressed_as_said_is_a_format_error(compression: str) -> None:
    with pytest.raises(FormatError) as e:
        decompress(b"plain text", compression)
    assert e.value.message.startswith(f"The object is not {compression}-compressed: ")


def test_a_change_line_of_an_incremental_export() -> None:
    keys = {"pk": {"S": "a"}}
    new = {"pk": {"S": "a"}, "v": {"N": "2"}}
    old = {"pk": {"S": "a"}, "v": {"N": "1"}}
    both = orjson.loads(change_line("DYNAMODB_JSON", keys, old, new, "NEW_AND_OLD_IMAGES", 1_700_000_000_000_000))
    assert both == {
        "Metadata": {"WriteTimestampMicros": {"N": "1700000000000000"}},
        "Keys": keys,
        "NewImage": new,
        "OldImage": old,
    }
    deleted = orjson.loads(change_line("DYNAMODB_JSON", keys, old, None, "NEW_IMAGE", 5))
    assert deleted == {"Metadata": {"WriteTimestampMicros": {"N": "5"}}, "Keys": keys}
    ion = simpleion.loads(change_line("ION", keys, old, new, "NEW_AND_OLD_IMAGES", 5).decode())
    assert ion["NewImage"]["v"] == 2 and ion["OldImage"]["v"] == 1
