-- sql/capture.sql: change capture installed by CREATE VIRTUAL TABLE ... USING dyng.
--
-- A log table records every change of the edge table; the triggers are plain
-- SQL, so connections and processes that never loaded dyng still log their
-- writes.  An UPDATE is logged as a delete of the old row plus an insert of
-- the new one, keyed by rowid, so a weight-only change is never missed.  Each
-- entry says what its rowid is at that point of the log, whatever follows, so
-- the log can be replayed, compared and undone entry by entry.  Each entry
-- also gets a random nonce: after a ROLLBACK, a later write reusing the same
-- seq gets another one, so a reader tells the entries it saw from their
-- replacements even when they look alike.  The same triggers refuse rows dyng
-- cannot use (non-integer node ids, weights that are NULL, not numbers,
-- negative or infinite) with an error naming the table and column; RAISE()
-- takes only a literal message, so the offending value itself is described,
-- not quoted.  Each write also trims the log to its newest {{log_limit}}
-- entries; a mirror that falls further behind reloads.
--
-- Placeholders, filled in by ext/capture.c (identifiers come quoted):
--   {{schema}}       schema of the graph and edge table
--   {{log}}          the log table             {{edges}}   the edge table
--   {{trg_ins}} {{trg_upd}} {{trg_del}}        trigger names
--   {{src}} {{dst}}  node-id columns of the edge table
--   {{log_weights}}  ", w0 REAL, w1 REAL, ..." log columns for the weights
--   {{log_wnames}}   ", w0, w1, ..."            {{new_weights}} ", NEW.c0, NEW.c1, ..."
--   {{checks}}       one SELECT RAISE(...) per rule and column, on NEW
--   {{changed}}      OLD.rowid IS NOT NEW.rowid OR OLD.c IS NOT NEW.c ... (all used columns)
--   {{upd_when}}     "WHEN {{changed}}", or nothing when the edge table has
--                    UNIQUE constraints (an UPDATE OR REPLACE of a column the
--                    graph does not use may still remove other rows)
--   {{replaced}}     nothing, or with UNIQUE constraints the statement of
--                    sql/replace.sql that logs the rows a REPLACE removed
--   {{log_limit}}    entries the log keeps
--
-- A reattach (dyng_update(g, 'reattach')) runs the same SQL with IF NOT
-- EXISTS after each CREATE TABLE and CREATE TRIGGER, so that it only adds.
-- Nothing here needs dyng to be removed: docs/sql.md ("Removing a graph
-- without dyng") gives the plain SQL that drops these triggers and the log.
CREATE TABLE {{schema}}.{{log}}(
  seq INTEGER PRIMARY KEY,
  op INTEGER NOT NULL,
  edge INTEGER NOT NULL,
  src INTEGER,
  dst INTEGER{{log_weights}},
  nonce INTEGER
);
CREATE TRIGGER {{schema}}.{{trg_ins}} AFTER INSERT ON {{edges}}
BEGIN
{{checks}}{{replaced}}
  INSERT INTO {{log}}(op, edge, src, dst{{log_wnames}}, nonce)
    VALUES (1, NEW.rowid, NEW.{{src}}, NEW.{{dst}}{{new_weights}}, random());
  DELETE FROM {{log}} WHERE seq <= last_insert_rowid() - {{log_limit}};
END;
CREATE TRIGGER {{schema}}.{{trg_upd}} AFTER UPDATE ON {{edges}}
{{upd_when}}BEGIN
{{checks}}{{replaced}}
  INSERT INTO {{log}}(op, edge, nonce) SELECT -1, OLD.rowid, random() WHERE {{changed}};
  INSERT INTO {{log}}(op, edge, src, dst{{log_wnames}}, nonce)
    SELECT 1, NEW.rowid, NEW.{{src}}, NEW.{{dst}}{{new_weights}}, random() WHERE {{changed}};
  DELETE FROM {{log}} WHERE seq <= last_insert_rowid() - {{log_limit}} AND ({{changed}});
END;
CREATE TRIGGER {{schema}}.{{trg_del}} AFTER DELETE ON {{edges}}
BEGIN
  INSERT INTO {{log}}(op, edge, nonce) VALUES (-1, OLD.rowid, random());
  DELETE FROM {{log}} WHERE seq <= last_insert_rowid() - {{log_limit}};
END;
