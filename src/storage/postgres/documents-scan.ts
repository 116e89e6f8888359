// The EMR scan's side of the PostgreSQL outbox: its watermark, and its documents filed in one transaction with
// it. One replica scans at a time (the coordination's 'emr-scan'), so the watermark only moves forward; a
// document another replica enqueued meanwhile (the admin API) keeps its row, by the unique externalId. Each
// change writes its history row in the same statement. Requests are sealed before the transaction begins, so
// that it holds its locks no longer than its statements take.
import type { Clock } from '../../clock.ts';
import type { DocumentRequest } from '../../contract/documents.ts';
import type { Sealer } from '../../sealing/sealer.ts';
import { type PreparedFiling, prepareFiling } from '../documents-requests.ts';
import { CHANGED_IN_EMR, type ScanLedger } from '../documents.ts';
import { insertDocument, type Queryable } from './documents-sql.ts';
import { type Pool, withTransaction } from './pool.ts';

export function createPostgresScanLedger(
  pool: Pool,
  clock: Clock,
  kept: (externalId: string, request: DocumentRequest, chars: number) => void,
  sealer: Sealer,
): ScanLedger {
  async function fileOne(q: Queryable, f: PreparedFiling): Promise<boolean> {
    if (f.kind === 'new') return (await insertDocument(q, clock, f.prepared, kept)).created;
    const changed =
      f.kind === 'requeue'
        ? await q.query(
            `WITH u AS (
               UPDATE outbox_documents SET state = 'queued', request = $1, document_size = $6, document_sha256 = $7, emr_version = $2, status_reason = NULL,
                 error_code = NULL, attempts = 0, next_attempt_at = 0, emr_synced = 1, updated_at = $3
               WHERE external_id = $4 AND state = 'REJECTED' RETURNING external_id)
             INSERT INTO document_history (external_id, at, status, attempt, detail) SELECT external_id, $3, 'queued', NULL, $5::text FROM u`,
            [f.stored.stored, f.version, clock.now(), f.externalId, CHANGED_IN_EMR, f.stored.digest?.size ?? null, f.stored.digest?.sha256 ?? null],
          )
        : await q.query(
            `WITH u AS (
               UPDATE outbox_documents SET error_code = $1, status_reason = $2, emr_version = $3, emr_synced = 0, updated_at = $4
               WHERE external_id = $5 AND state = 'REJECTED' RETURNING external_id)
             INSERT INTO document_history (external_id, at, status, attempt, detail) SELECT external_id, $4, 'REJECTED', NULL, $1 FROM u`,
            [f.code, f.reason, f.version, clock.now(), f.externalId],
          );
    return changed.rowCount === 1;
  }
  return {
    async scanWatermark() {
      const { rows } = await pool.query<{ watermark: string | null }>('SELECT watermark FROM pusher_watermark WHERE id = 1');
      return rows[0]?.watermark ?? undefined;
    },
    async fileScanned(filings, watermark) {
      if (!filings.length && !watermark) return [];
      const prepared = filings.map((f) => prepareFiling(sealer, f));
      return withTransaction(pool, async (client) => {
        const changed: boolean[] = [];
        for (const f of prepared) changed.push(await fileOne(client, f));
        if (watermark) await client.query('UPDATE pusher_watermark SET watermark = $1 WHERE id = 1', [watermark]);
        return changed;
      });
    },
  };
}
