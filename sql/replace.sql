-- sql/replace.sql: capture of rows that a REPLACE conflict resolution removes.
--
-- INSERT OR REPLACE (and UPDATE OR REPLACE) that conflicts with a UNIQUE
-- constraint deletes the other row without firing DELETE triggers (unless
-- PRAGMA recursive_triggers is on).  Installed only when the edge table has
-- UNIQUE constraints, these BEFORE triggers log every row that the new row
-- could replace as op 0, "check this rowid": the sync reads that rowid from
-- the table and takes whatever is there now, so a row an OR IGNORE or a
-- failed statement kept stays, and a replaced one goes.
--
-- Placeholders (besides those of capture.sql):
--   {{trg_rep_ins}} {{trg_rep_upd}}   trigger names
--   {{unique_match}}   (c1 = NEW.c1 AND c2 = NEW.c2) OR (...), one group per
--                      UNIQUE constraint of plain columns
CREATE TRIGGER {{schema}}.{{trg_rep_ins}} BEFORE INSERT ON {{edges}}
BEGIN
  INSERT INTO {{log}}(op, edge) SELECT 0, rowid FROM {{edges}} WHERE {{unique_match}};
END;
CREATE TRIGGER {{schema}}.{{trg_rep_upd}} BEFORE UPDATE ON {{edges}}
BEGIN
  INSERT INTO {{log}}(op, edge)
    SELECT 0, rowid FROM {{edges}} WHERE rowid <> OLD.rowid AND ({{unique_match}});
END;
