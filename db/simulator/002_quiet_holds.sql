-- The documents held for a clinic's quiet hours, read every 50 ms by the release loop (src/simulator/store.ts
-- quietHolds): a partial index whose terms are the query's own, so the loop reads only the held ones instead of
-- parsing the JSON of every document ever stored (with 10,000 stored, the scan took most of the simulator's CPU).
CREATE INDEX records_quiet_holds ON records (kind)
  WHERE json_extract(data, '$.heldFor') = 'quiet_hours' AND json_extract(data, '$.status') = 'HELD';
