-- examples/road_network.sql: a road network from a file, a route, a closed
-- road, the detour.
--   sqlite3 < examples/road_network.sql      (from the folder holding dyng.so
--                                               and examples/roads.gr)
.load ./dyng
.headers on
.mode column

-- The roads, read from a DIMACS file (a 6 x 6 street grid with a ring road).
CREATE TABLE roads(id INTEGER PRIMARY KEY, src INTEGER NOT NULL, dst INTEGER NOT NULL, metres REAL);
INSERT INTO roads(src, dst, metres) SELECT src, dst, weight FROM dyng_read_edges('examples/roads.gr');
SELECT count(*) AS roads, count(DISTINCT src) AS junctions FROM roads;

CREATE VIRTUAL TABLE town USING dyng(edges=roads, weights=metres);

.print '-- from the north-west corner (1) to the south-east corner (36)'
SELECT seq, node, cost, agg_cost FROM dyng_path('town', 1, 36);

.print '-- the length of that route'
SELECT dist AS metres FROM dyng_sssp('town', 1) WHERE node = 36;

.print '-- roadworks: the first street of that route is closed, both ways'
WITH route AS (SELECT seq, node FROM dyng_path('town', 1, 36)),
     street AS (SELECT a.node AS u, b.node AS v FROM route a JOIN route b ON b.seq = a.seq + 1
                WHERE a.seq = 1)
DELETE FROM roads WHERE (src, dst) IN (SELECT u, v FROM street) OR (src, dst) IN (SELECT v, u FROM street);
SELECT changes() AS closed;

.print '-- the detour (the kept tree from 1 was updated, not recomputed)'
SELECT seq, node, cost, agg_cost FROM dyng_path('town', 1, 36);
SELECT json_extract(value, '$.updates') AS tree_updates
  FROM json_each(json_extract(dyng_config(), '$.graphs[0].trees'))
 WHERE json_extract(value, '$.source') = 1;

.print '-- the roadworks end'
INSERT INTO roads(src, dst, metres)
  SELECT f.src, f.dst, f.weight FROM dyng_read_edges('examples/roads.gr') AS f
   WHERE NOT EXISTS (SELECT 1 FROM roads r WHERE r.src = f.src AND r.dst = f.dst);
SELECT dist AS metres FROM dyng_sssp('town', 1) WHERE node = 36;
