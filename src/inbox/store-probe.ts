// The probe of a store that could not take writes: one committed write of about an event's size, in the
// one-row table store_probe. A rolled-back write would not do: a full disk fails the commit (or the page it
// needs), and a write that only reuses its own pages would not need the room an event needs. So the new
// row is written before the old one is deleted, and the transaction commits (fsynced, as the inbox's do).
import type { Db } from '../database/open.ts';

/** About one webhook: a page of padding needs fresh room, as an event's row does. */
const PROBE_BYTES = 4096;

/** Returns a function that commits one probe row; it throws the SQLite error when the store cannot take it. */
export function createStoreProbe(db: Db): (nowMs: number) => void {
  let probe: ((nowMs: number) => void) | undefined;
  // Prepared at the first probe: a store that cannot be written may not even prepare (a read-only old file).
  return (nowMs) => {
    probe ??= prepareProbe(db);
    probe(nowMs);
  };
}

function prepareProbe(db: Db): (nowMs: number) => void {
  const insert = db.prepare('INSERT INTO store_probe (probed_at, pad) VALUES (?, zeroblob(?))');
  const dropOthers = db.prepare('DELETE FROM store_probe WHERE id <> ?');
  const write = db.transaction((nowMs: number) => {
    const { lastInsertRowid } = insert.run(nowMs, PROBE_BYTES);
    dropOthers.run(lastInsertRowid);
  });
  return (nowMs) => write.immediate(nowMs);
}
