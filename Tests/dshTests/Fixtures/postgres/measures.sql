-- The fixture schema of the PostgreSQL tests and transcripts: measures.csv as a table with
-- server types. "NA" stays text in the text columns (read with null "NA" it is a null) and is
-- NULL in the others, as a CSV read with null "NA" has it.
CREATE TEMPORARY TABLE measures_text (id text, city text, kind text, reading text, count text, big text, day text, ok text);
\copy measures_text FROM 'measures.csv' WITH (FORMAT csv, HEADER true)
CREATE TABLE measures (id int PRIMARY KEY, city text, kind varchar(4), reading numeric, count int, big bigint, day date, ok boolean);
INSERT INTO measures SELECT id::int, city, kind, NULLIF(reading, 'NA')::numeric, NULLIF(count, 'NA')::int,
  big::bigint, NULLIF(day, 'NA')::date, NULLIF(ok, 'NA')::boolean FROM measures_text;
-- Labels of the kinds, joined to measures: "a" twice (the first is taken), a null code.
CREATE TABLE labels (code text, label text, rank int);
\copy labels FROM 'labels.csv' WITH (FORMAT csv, HEADER true)
-- Enough rows that the planner reads a key or an indexed column by its index (explain).
CREATE TABLE readings (id int PRIMARY KEY, station text, value float8);
INSERT INTO readings SELECT g, 's' || (g % 40), g / 8.0 FROM generate_series(1, 20000) g;
CREATE INDEX readings_station ON readings (station);
ANALYZE readings;
