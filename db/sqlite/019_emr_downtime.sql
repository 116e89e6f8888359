-- Planned EMR downtime set by operators (src/storage/emr-downtime.ts): the operator's downtime (POST
-- /admin/emr/downtime: until when, and why) and a scheduled EMR_DOWNTIME window ended early (DELETE), one row
-- of each kind at most. The reason is an operator's note, never patient data.
CREATE TABLE emr_downtime (
  kind      TEXT PRIMARY KEY CHECK (kind IN ('operator', 'ended')),
  until_at  INTEGER NOT NULL,
  reason    TEXT,
  set_at    INTEGER NOT NULL
) WITHOUT ROWID;
