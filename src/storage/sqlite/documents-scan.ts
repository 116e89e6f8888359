// The EMR scan's side of the SQLite outbox: its watermark, and its documents filed in one transaction with it,
// each change with its history row. Their requests are sealed before the transaction (nothing asynchronous may
// run inside one).
import type { Clock } from '../../clock.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import type { Db } from '../../sqlite/open.ts';
import { type PreparedFiling, prepareFiling } from '../documents-requests.ts';
import { CHANGED_IN_EMR, type ScanLedger } from '../documents.ts';
import { createSqliteDocumentHistory } from './document-history.ts';
import type { Enqueue } from './documents-writes.ts';

export function createSqliteScanLedger(db: Db, clock: Clock, enqueue: Enqueue, sealer: Sealer): ScanLedger {
  const read = db.prepare('SELECT watermark FROM pusher_watermark WHERE id = 1').pluck();
  const write = db.prepare('UPDATE pusher_watermark SET watermark = ? WHERE id = 1');
  const requeue = db.prepare(
    "UPDATE outbox_documents SET state = 'queued', request = ?, document_size = ?, document_sha256 = ?, emr_version = ?, status_reason = NULL, error_code = NULL, attempts = 0, next_attempt_at = 0, emr_synced = 1, updated_at = ? WHERE external_id = ? AND state = 'REJECTED'",
  );
  const rejection = db.prepare(
    "UPDATE outbox_documents SET error_code = ?, status_reason = ?, emr_version = ?, emr_synced = 0, updated_at = ? WHERE external_id = ? AND state = 'REJECTED'",
  );
  const history = createSqliteDocumentHistory(db, () => clock.now());
  function fileOne(f: PreparedFiling): boolean {
    if (f.kind === 'new') return enqueue(f.prepared).created;
    const changed =
      f.kind === 'requeue'
        ? requeue.run(f.stored.stored, f.stored.digest?.size ?? null, f.stored.digest?.sha256 ?? null, f.version, clock.now(), f.externalId).changes === 1
        : rejection.run(f.code, f.reason, f.version, clock.now(), f.externalId).changes === 1;
    if (changed) history.record(f.externalId, f.kind === 'requeue' ? 'queued' : 'REJECTED', f.kind === 'requeue' ? CHANGED_IN_EMR : f.code);
    return changed;
  }
  const fileAll = db.transaction((filings: readonly PreparedFiling[], watermark: string | undefined) => {
    const changed = filings.map(fileOne);
    if (watermark) write.run(watermark);
    return changed;
  });
  return {
    scanWatermark: async () => (read.get() as string | null) ?? undefined,
    async fileScanned(filings, watermark) {
      if (!filings.length && !watermark) return [];
      const prepared = filings.map((f) => prepareFiling(sealer, f));
      return fileAll.immediate(prepared, watermark);
    },
  };
}
