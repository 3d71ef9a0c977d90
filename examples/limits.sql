-- examples/limits.sql: budgets on what one query may compute, and on the
-- memory of a graph (docs/sql.md, "Limits: interrupts and budgets").
--   sqlite3 < examples/limits.sql      (from the folder holding dyng.so)
-- Two statements fail on purpose; the shell prints their errors and goes on.
.load ./dyng

-- A road-like grid of 300 x 1000 junctions.
CREATE TABLE roads(src INTEGER NOT NULL, dst INTEGER NOT NULL, metres REAL);
WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x < 299999)
INSERT INTO roads SELECT x, x + 1, 1 + x % 7 FROM i WHERE (x + 1) % 1000 != 0
  UNION ALL SELECT x, x + 1000, 2 + x % 5 FROM i WHERE x + 1000 < 300000;
CREATE VIRTUAL TABLE net USING dyng(edges=roads, weights=metres);

-- One millisecond is too little for all 300,000 distances: the query stops
-- with an error naming the budget, and nothing half-done is kept.
SELECT dyng_config('max_ms', 1);
SELECT count(*) FROM dyng_sssp('net', 0);
SELECT dyng_config('max_ms', 0);
SELECT count(*) AS reached FROM dyng_sssp('net', 0);

-- A graph may hold at most max_graph_mb MiB: past it, it is refused (and
-- freed) until edges go or the budget rises.  The table keeps every row.
SELECT dyng_config('max_graph_mb', 1);
INSERT INTO roads VALUES (0, 299999, 1);
SELECT count(*) FROM dyng_sssp('net', 0);
SELECT dyng_config('max_graph_mb', 0);
SELECT dist AS shortcut FROM dyng_sssp('net', 0) WHERE node = 299999;
