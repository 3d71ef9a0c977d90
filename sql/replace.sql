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
--     the row is in, begin with {{replaced}} below: a delete (op -1) for
--     each marker among the newest {{replace_window}} log entries whose row
--     is no longer in the table.  A row deleted there is gone at that point
--     of the log, so the entry is true where it stands, and the log stays a
--     list of entries that each say what their rowid is from then on.
--
-- The window covers what a row's own statement logs between its markers and
-- its AFTER trigger: a marker per UNIQUE constraint from the BEFORE INSERT
-- trigger, one more per constraint from an upsert's BEFORE UPDATE trigger,
-- and with recursive_triggers a delete per removed row (3 per constraint,
-- plus 2).  Each constraint matches one row at most: a partial index brings
-- its WHERE clause.
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
  INSERT INTO {{log}}(op, edge, nonce)
    SELECT -1, l.edge, random() FROM {{log}} AS l
    WHERE l.seq > (SELECT max(seq) FROM {{log}}) - {{replace_window}} AND l.op = 2
      AND NOT EXISTS (SELECT 1 FROM {{edges}} WHERE rowid = l.edge);
