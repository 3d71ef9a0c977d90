-- examples/triggers.sql: one connection writes edges (an application that
-- knows nothing of dyng), another asks questions; the graph follows.
--   sqlite3 < examples/triggers.sql          (run from the folder holding dyng.so)
-- Uses the shell's .connection command (SQLite 3.37 or newer).

.connection 0
.open --new dyng-example-triggers.db
.load ./dyng
PRAGMA journal_mode = WAL;
CREATE TABLE links(src INTEGER NOT NULL, dst INTEGER NOT NULL, ms REAL);
INSERT INTO links VALUES (1, 2, 10), (2, 3, 10), (3, 4, 10);
-- CREATE VIRTUAL TABLE also puts triggers on `links` that log each change,
-- so that writers need not load dyng.
CREATE VIRTUAL TABLE net USING dyng(edges=links, weights=ms);
.print '-- connection 0 (dyng): latency from 1 to 4'
SELECT dist AS ms FROM dyng_sssp('net', 1) WHERE node = 4;

.connection 1
.open dyng-example-triggers.db
.print '-- connection 1 (no dyng): a faster link 1 -> 3, and 3 -> 4 goes down'
INSERT INTO links VALUES (1, 3, 12);
DELETE FROM links WHERE src = 3 AND dst = 4;
INSERT INTO links VALUES (3, 5, 1), (5, 4, 1);

.connection 0
.print '-- connection 0: the next query sees both changes'
SELECT dist AS ms FROM dyng_sssp('net', 1) WHERE node = 4;
SELECT group_concat(node, ' -> ') AS route FROM (SELECT node FROM dyng_path('net', 1, 4) ORDER BY seq);
SELECT json_extract(value, '$.batches') AS batches, json_extract(value, '$.reloads') AS reloads
  FROM json_each(dyng_config('graphs'));

.connection 1
.print '-- connection 1: a transaction that is rolled back changes nothing'
BEGIN;
DELETE FROM links;
ROLLBACK;

.connection 0
SELECT dist AS ms FROM dyng_sssp('net', 1) WHERE node = 4;
DROP TABLE net;
.connection close 1
.open :memory:
.shell rm -f dyng-example-triggers.db dyng-example-triggers.db-wal dyng-example-triggers.db-shm
