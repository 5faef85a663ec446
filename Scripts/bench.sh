#!/usr/bin/env bash
# Builds dsh in release and runs the benchmark: figures for dsh and what it is compared with,
# side by side. Generates its inputs under bench-data/ (about 70 MB) on the first run.
# 'Scripts/bench.sh scale' runs only the hostile-scale measures, 'Scripts/bench.sh types' only the
# typed-loading and expression measures, 'Scripts/bench.sh live' only the live-data measures (first window, edits), 'Scripts/bench.sh library' only the library's diff and snapshot → apply loop (with the sectioned loop's grid), 'Scripts/bench.sh sections' only that grid (1k–1M rows in 10–3,000 sections), 'Scripts/bench.sh answers' only group by, join and footer
# aggregates (the last two beside DuckDB's CLI, installed from PyPI when missing), 'Scripts/bench.sh postgres'
# only the PostgreSQL measures (a throwaway cluster under bench-data/postgres, 10M rows made on
# the first run, stopped at the end), 'Scripts/bench.sh databases' only the measures of large SQLite
# and PostgreSQL views printed whole, windows and counts (a 10M-row SQLite file made on the first
# run, and the same server with a 2M-row table too), 'Scripts/bench.sh browse' only browse's keys
# under a pseudo-terminal (1M rows in memory, 10M in SQLite and on the same server),
# 'Scripts/bench.sh explore' only reading a gzip CSV (beside the plain file and gzip -dc), a file
# written with ; and 2012/01/31 dates beside the same rows with commas ('Scripts/bench.sh dialects' alone),
# median and a window rank beside DuckDB's CLI, and a pattern and a join of two tables of a
# SQLite file printed whole beside sqlite3, and a 10M-row Parquet file's first rows and a group by
# beside DuckDB's CLI ('Scripts/bench.sh parquet' those alone), 'Scripts/bench.sh plans' only explain and a typo's
# error on the 1M-row CSV beside the statements that do the work, 'Scripts/bench.sh serve' only a
# served view's edits (100k and 1M rows, served and not) and a page's window requests.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/setup.sh
sudo_if_needed=""; [ "$(id -u)" -ne 0 ] && sudo_if_needed="sudo"
if ! command -v sqlite3 >/dev/null; then
  $sudo_if_needed apt-get -o DPkg::Lock::Timeout=600 install -y -qq sqlite3 >/dev/null
fi
# GNU time reports a child's own peak memory (see measure() in Sources/dsh-bench/Measuring.swift).
if [ ! -x /usr/bin/time ]; then
  $sudo_if_needed apt-get -o DPkg::Lock::Timeout=600 install -y -qq time >/dev/null || echo "no GNU time: peak memory may read as unknown" >&2
fi
if [ -z "${DUCKDB:-}" ] && ! command -v duckdb >/dev/null; then
  if [ ! -x .build-duckdb/bin/duckdb ]; then
    python3 -m pip install -q --target .build-duckdb duckdb-cli >&2 || echo "no DuckDB CLI: its comparisons are skipped" >&2
  fi
  [ -x .build-duckdb/bin/duckdb ] && export DUCKDB="$(pwd)/.build-duckdb/bin/duckdb" PYTHONPATH="$(pwd)/.build-duckdb"
fi
swift build -c release --product dsh >&2
swift build -c release --product dsh-bench >&2
if [ "${1:-}" = postgres ] || [ "${1:-}" = databases ] || [ "${1:-}" = browse ]; then
  # A cluster of the bench's own on a free port, trust authentication, filled once with 10M rows:
  # an int key, a category of 100 values with an index, three other columns.
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$bin" ]; then $sudo_if_needed apt-get -o DPkg::Lock::Timeout=600 install -y -qq postgresql >/dev/null; bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); fi
  folder="$(pwd)/bench-data/postgres"
  as_owner=(); [ "$(id -u)" -eq 0 ] && as_owner=(runuser -u postgres --)
  mkdir -p "$folder"; [ "$(id -u)" -eq 0 ] && chown postgres "$folder"
  [ -d "$folder/data" ] || "${as_owner[@]}" "$bin/initdb" -D "$folder/data" -U dsh --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as_owner[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/server.log" -w -o "-p $port -k $folder -c listen_addresses=127.0.0.1" start >/dev/null
  trap '"${as_owner[@]}" "$bin/pg_ctl" -D "$folder/data" -m fast stop >/dev/null' EXIT
  psql=("$bin/psql" -X -q -A -h 127.0.0.1 -p "$port" -U dsh -d postgres)
  # A table that is there is complete: it is filled in one transaction and renamed at the end.
  if [ "$("${psql[@]}" -t -c "SELECT to_regclass('big') IS NOT NULL")" != t ]; then
    echo "filling a 10M-row table on the bench's server …" >&2
    "${psql[@]}" -v ON_ERROR_STOP=1 -1 \
      -c "DROP TABLE IF EXISTS big_filling" \
      -c "CREATE TABLE big_filling (id int PRIMARY KEY, category int, name text, amount float8, day date)" \
      -c "INSERT INTO big_filling SELECT g, g::bigint * 7919 % 100, 'name ' || g, (g::bigint * 104729 % 100000) / 100.0, DATE '2000-01-01' + g % 9000 FROM generate_series(1, 10000000) g" \
      -c "CREATE INDEX big_category ON big_filling (category)" -c "ALTER TABLE big_filling RENAME TO big" >&2
    "${psql[@]}" -v ON_ERROR_STOP=1 -c "VACUUM ANALYZE big" >&2
  fi
  if [ "$("${psql[@]}" -t -c "SELECT to_regclass('big2m') IS NOT NULL")" != t ]; then
    "${psql[@]}" -v ON_ERROR_STOP=1 -1 -c "CREATE TABLE big2m_filling AS SELECT * FROM big WHERE id <= 2000000" \
      -c "ALTER TABLE big2m_filling ADD PRIMARY KEY (id)" -c "CREATE INDEX big2m_category ON big2m_filling (category)" \
      -c "ALTER TABLE big2m_filling RENAME TO big2m" >&2
    "${psql[@]}" -v ON_ERROR_STOP=1 -c "VACUUM ANALYZE big2m" >&2
  fi
  # Tables without a unique key, shaped as the diamonds data set (53,940 rows) and seven times it.
  for rows in 53940 377580; do
    if [ "$("${psql[@]}" -t -c "SELECT to_regclass('gems$rows') IS NOT NULL")" != t ]; then
      "${psql[@]}" -v ON_ERROR_STOP=1 -1 \
        -c "CREATE TABLE gems_filling AS SELECT (0.2 + (g * 37 % 480) / 100.0)::float8 AS carat, (ARRAY['Fair','Good','Very Good','Premium','Ideal'])[1 + g % 5] AS cut, chr((68 + g % 7)::int) AS color, (ARRAY['I1','SI2','SI1','VS2','VS1','VVS2','VVS1','IF'])[1 + g % 8] AS clarity, (55 + (g * 13 % 130) / 10.0)::float8 AS depth, (50 + g * 7 % 30)::float8 AS \"table\", (326 + g * 7919 % 18500)::int AS price, (3.7 + (g * 11 % 700) / 100.0)::float8 AS x FROM generate_series(1::bigint, $rows) g" \
        -c "ALTER TABLE gems_filling RENAME TO gems$rows" >&2
      "${psql[@]}" -v ON_ERROR_STOP=1 -c "VACUUM ANALYZE gems$rows" >&2
    fi
  done
  export DSH_BENCH_POSTGRES="postgresql://dsh@127.0.0.1:$port/postgres" DSH_BENCH_PSQL="${psql[*]}"
  .build/release/dsh-bench "$(pwd)/.build/release/dsh" "$@"
  exit
fi
exec .build/release/dsh-bench "$(pwd)/.build/release/dsh" "$@"
