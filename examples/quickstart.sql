-- examples/quickstart.sql: dyng in the sqlite3 shell.
--   sqlite3 < examples/quickstart.sql        (run from the folder holding dyng.so)
.load ./dyng
.headers on
.mode column

-- An ordinary edge table: a small road network with three weights.
CREATE TABLE roads(src INTEGER NOT NULL, dst INTEGER NOT NULL,
                   length REAL, minutes REAL, toll REAL);
INSERT INTO roads VALUES (1,2,4,5,0),(2,3,1,9,2),(1,3,7,3,0),(3,4,2,2,1),(2,4,6,1,0);

-- A graph that mirrors it; its definition lives in the database file.
CREATE VIRTUAL TABLE net USING dyng(edges=roads, src=src, dst=dst,
                                    weights='length,minutes,toll');

.print '-- shortest paths from node 1 by length (edge = rowid in roads)'
SELECT node, dist, parent, edge FROM dyng_sssp('net', 1);

.print '-- travel time from 1 to 3'
SELECT dist FROM dyng_sssp('net', 1, 'minutes') WHERE node = 3;

.print '-- the shortest route from 1 to 4 by length'
SELECT * FROM dyng_path('net', 1, 4, 'length');

.print '-- a route good in all three weights at once (cost so far in each)'
SELECT * FROM dyng_mosp('net', 1, 4);

.print '-- close the road 3 -> 4; the next query sees the change'
DELETE FROM roads WHERE src = 3 AND dst = 4;
SELECT * FROM dyng_path('net', 1, 4, 'length');

.print '-- writes are applied to the graph incrementally; dyng_update reports it'
INSERT INTO roads VALUES (4, 5, 3, 3, 0);
SELECT json_extract(dyng_update('net'), '$.inserted') AS inserted,
       json_extract(dyng_update('net'), '$.reloads') AS reloads;

.print '-- the vertices and their degrees'
SELECT * FROM net;

.print '-- diagnostics: the backend, the graph, its triangles (the count is kept'
.print '-- and updated by later writes) and which backend counts them'
SELECT dyng_version() AS version,
       json_extract(dyng_config(), '$.backend.name') AS backend,
       json_extract(dyng_config(), '$.graphs[0].vertices') AS vertices,
       json_extract(dyng_config(), '$.graphs[0].edges') AS edges,
       dyng_cycle_count('net', 3) AS triangles,
       json_extract(dyng_config(), '$.graphs[0].runs_on.cycle_counts') AS cycles_on;

DROP TABLE net;  -- removes the graph, its triggers and its change log
