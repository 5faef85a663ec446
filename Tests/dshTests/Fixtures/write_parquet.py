"""Writes Parquet files of every type and codec dsh reads, with pyarrow, into the folder given.

Each file holds the same rows (nulls in every column, one row in seven); the options vary:
codec, data page version, dictionary or not, the delta and byte-stream-split encodings, row
groups of a thousand rows, and INT96 timestamps. dsh's answers over each are compared with
DuckDB's read_parquet (ParquetTests).
"""
import datetime
import decimal
import sys
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

folder = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 3000


def column(make):
    return [None if i % 7 == 3 else make(i) for i in range(rows)]


base = datetime.datetime(2021, 3, 4, 5, 6, 7, 123456)
table = pa.table({
    "i8": pa.array(column(lambda i: i % 256 - 128), pa.int8()),
    "i16": pa.array(column(lambda i: i * 7 % 65536 - 32768), pa.int16()),
    "i32": pa.array(column(lambda i: i * 104729 - 2**31 if i % 5 == 0 else i), pa.int32()),
    "i64": pa.array(column(lambda i: i * 1_000_000_007 - 2**62), pa.int64()),
    "u8": pa.array(column(lambda i: i % 256), pa.uint8()),
    "u16": pa.array(column(lambda i: i * 31 % 65536), pa.uint16()),
    "u32": pa.array(column(lambda i: (i * 2654435761) % 2**32), pa.uint32()),
    "u64": pa.array(column(lambda i: (i * 11400714819323198485) % 2**64), pa.uint64()),
    "f32": pa.array(column(lambda i: i * 0.1 - 50), pa.float32()),
    "f64": pa.array(column(lambda i: i / 3 - 100), pa.float64()),
    "flag": pa.array(column(lambda i: i % 3 == 0), pa.bool_()),
    "s": pa.array(column(lambda i: ["ada", "grace", "zoë", "", "línea, \"quoted\""][i % 5] + str(i % 40)), pa.string()),
    "ls": pa.array(column(lambda i: "long-" + str(i)), pa.large_string()),
    "bin": pa.array(column(lambda i: bytes([i % 256, 65, 0, 255])), pa.binary()),
    "day": pa.array(column(lambda i: datetime.date(1969, 12, 20) + datetime.timedelta(days=i)), pa.date32()),
    "ts_s": pa.array(column(lambda i: base + datetime.timedelta(seconds=i * 3601)), pa.timestamp("s")),
    "ts_ms": pa.array(column(lambda i: base + datetime.timedelta(milliseconds=i * 123457)), pa.timestamp("ms")),
    "ts_us": pa.array(column(lambda i: base - datetime.timedelta(days=40000, microseconds=i * 7)), pa.timestamp("us")),
    "ts_ns": pa.array(column(lambda i: base + datetime.timedelta(microseconds=i * 3)), pa.timestamp("ns")),
    "ts_utc": pa.array(column(lambda i: base + datetime.timedelta(minutes=i)), pa.timestamp("us", tz="UTC")),
    "t_ms": pa.array(column(lambda i: datetime.time(i % 24, i % 60, i % 60, (i % 1000) * 1000)), pa.time32("ms")),
    "t_us": pa.array(column(lambda i: datetime.time(i % 24, i * 7 % 60, 0, i % 1000000)), pa.time64("us")),
    "d10": pa.array(column(lambda i: decimal.Decimal(i * 37 - 5000) / 100), pa.decimal128(10, 2)),
    "d30": pa.array(column(lambda i: decimal.Decimal(i * 123456789123 - 10**15) / 10**5), pa.decimal128(30, 5)),
    "id": pa.array(column(lambda i: uuid.UUID(int=i * 0x9E3779B97F4A7C15_9E3779B97F4A7C15 % 2**128).bytes), pa.binary(16)),
})

codecs = ["none", "snappy", "gzip", "zstd"]
for codec in codecs:
    for version in ["1.0", "2.0"]:
        pq.write_table(table, f"{folder}/arrow-{codec}-v{version[0]}.parquet", compression=codec, data_page_version=version)
# Plain values, no dictionary, in row groups of a thousand rows.
pq.write_table(table, f"{folder}/arrow-plain-groups.parquet", use_dictionary=False, row_group_size=1000, compression="snappy")
# The delta encodings and byte stream split, page v2.
pq.write_table(
    table,
    f"{folder}/arrow-delta.parquet",
    use_dictionary=False,
    data_page_version="2.0",
    column_encoding={
        "i32": "DELTA_BINARY_PACKED",
        "i64": "DELTA_BINARY_PACKED",
        "s": "DELTA_BYTE_ARRAY",
        "ls": "DELTA_LENGTH_BYTE_ARRAY",
        "bin": "DELTA_BYTE_ARRAY",
        "f32": "BYTE_STREAM_SPLIT",
        "f64": "BYTE_STREAM_SPLIT",
    },
    compression="zstd",
)
# Timestamps as the deprecated INT96, as Spark and Impala wrote them.
pq.write_table(table, f"{folder}/arrow-int96.parquet", use_deprecated_int96_timestamps=True)
