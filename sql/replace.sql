-- sql/replace.sql: capture of rows that a REPLACE conflict resolution removes.
--
-- INSERT OR REPLACE (and UPDATE OR REPLACE, and an upsert's update) that
-- conflicts with a UNIQUE constraint deletes the other row without firing
-- DELETE triggers (unless PRAGMA recursive_triggers is on).  Installed only
-- when the edge table has UNIQUE constraints:
--
--   - BEFORE INSERT / UPDATE triggers log every row the new row could
--     replace as op 2, a marker with no effect of its own: whether the row
--     goes is not known yet (OR IGNORE, DO NOTHING, DO UPDATE and a failing
--     statement keep it).
--   - The AFTER INSERT / UPDATE triggers of sql/capture.sql, which run once
--     the row is in, begin with {{replaced}} below: each marker among the
--     newest {{replace_window}} log entries whose row is no longer in the
--     table becomes a delete (op -1, a new nonce) where it stands.  Nothing
--     but markers comes between a row's markers and the removal of the rows
--     it replaces, so the delete is true at the marker's place, and the log
--     stays a list of entries that each say what their rowid is from then
--     on.  (An UPDATE in place, not an INSERT ... SELECT from the log, which
--     SQLite would run through a temporary table for every row.)
--
-- The window covers what a row's own statement logs between its markers and
-- its AFTER trigger: a marker per UNIQUE constraint from the BEFORE INSERT
-- trigger, one more per constraint from an upsert's BEFORE UPDATE trigger,
-- and with recursive_triggers a delete per removed row (3 per constraint,
-- plus 2).  Each constraint matches one row at most: a partial index brings
-- its WHERE clause.  A marker of an earlier row (an OR IGNORE, DO NOTHING
-- or failed one) whose row has gone since becomes a delete too: redundant,
-- since whatever removed the row logged one after it.
--
-- Placeholders (besides those of capture.sql):
--   {{trg_rep_ins}} {{trg_rep_upd}}   trigger names
--   {{unique_match}}   (c1 = NEW.c1 AND c2 = NEW.c2) OR (...), one group per
--                      UNIQUE constraint of plain columns
--   {{replace_window}} log entries the AFTER triggers look back at
CREATE TRIGGER {{schema}}.{{trg_rep_ins}} BEFORE INSERT ON {{edges}}
BEGIN
  INSERT INTO {{log}}(op, edge, nonce) SELECT 2, rowid, random() FROM {{edges}} WHERE {{unique_match}};
END;
CREATE TRIGGER {{schema}}.{{trg_rep_upd}} BEFORE UPDATE ON {{edges}}
BEGIN
  INSERT INTO {{log}}(op, edge, nonce)
    SELECT 2, rowid, random() FROM {{edges}} WHERE rowid <> OLD.rowid AND ({{unique_match}});
END;
-- {{replaced}}:
  UPDATE {{log}} SET op = -1, nonce = random()
    WHERE seq > (SELECT max(seq) FROM {{log}}) - {{replace_window}} AND op = 2
      AND NOT EXISTS (SELECT 1 FROM {{edges}} WHERE rowid = {{log}}.edge);
