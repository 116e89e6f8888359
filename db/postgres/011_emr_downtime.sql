-- Planned EMR downtime set by operators (src/storage/emr-downtime.ts): the operator's downtime (POST
-- /admin/emr/downtime: until when, and why) and a scheduled EMR_DOWNTIME window ended early (DELETE), one row
-- of each kind at most. Read by every replica. The reason is an operator's note, never patient data.
CREATE TABLE emr_downtime (
  kind      TEXT COLLATE "C" PRIMARY KEY CHECK (kind IN ('operator', 'ended')),
  until_at  BIGINT NOT NULL,
  reason    TEXT,
  set_at    BIGINT NOT NULL
);
