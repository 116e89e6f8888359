// What admins, the CLI and metrics read of the PostgreSQL outbox (a document's history included), and its
// retention, which deletes a pruned document's history with it.
import type { DocumentHistoryEntry, DocumentStore, OutboxRow, OutboxState, OutboxViews } from '../documents.ts';
import { FINAL } from './documents-sql.ts';
import type { Pool } from './pool.ts';

export function createPostgresOutboxViews(pool: Pool): OutboxViews & Pick<DocumentStore, 'pruneFinished'> {
  return {
    async get(externalId) {
      const { rows } = await pool.query<OutboxRow>('SELECT * FROM outbox_documents WHERE external_id = $1', [externalId]);
      return rows[0];
    },
    async history(externalId) {
      const { rows } = await pool.query<DocumentHistoryEntry>('SELECT at, status, attempt, detail FROM document_history WHERE external_id = $1 ORDER BY id', [
        externalId,
      ]);
      return rows;
    },
    async list(state, limit = 200) {
      const { rows } = await pool.query<OutboxRow>('SELECT * FROM outbox_documents WHERE ($1::text IS NULL OR state = $1) ORDER BY created_at DESC LIMIT $2', [
        state ?? null,
        limit,
      ]);
      return rows;
    },
    async page(f) {
      const { rows } = await pool.query<OutboxRow>(
        `SELECT * FROM outbox_documents
         WHERE ($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR document_type = $2)
           AND ($3::bigint IS NULL OR created_at >= $3) AND ($4::bigint IS NULL OR created_at < $4)
           AND ($5::bigint IS NULL OR (created_at, external_id) < ($5, $6::text))
         ORDER BY created_at DESC, external_id DESC LIMIT $7`,
        [f.status ?? null, f.type ?? null, f.since ?? null, f.until ?? null, f.after?.createdAt ?? null, f.after?.externalId ?? null, f.limit + 1],
      );
      if (rows.length <= f.limit) return { rows, next: null };
      const shown = rows.slice(0, f.limit);
      const last = shown[shown.length - 1]!;
      return { rows: shown, next: { createdAt: last.created_at, externalId: last.external_id } };
    },
    async oldestQueuedCreatedAt() {
      const { rows } = await pool.query<{ at: number | null }>("SELECT min(created_at) AS at FROM outbox_documents WHERE state = 'queued'");
      return rows[0]?.at ?? undefined;
    },
    async openCount() {
      const { rows } = await pool.query<{ n: number }>("SELECT count(*) AS n FROM outbox_documents WHERE state IN ('queued', 'HELD') OR emr_synced = 0");
      return rows[0]!.n;
    },
    async countByState() {
      const { rows } = await pool.query<{ state: OutboxState; count: number }>('SELECT state, count(*) AS count FROM outbox_documents GROUP BY state');
      return rows;
    },
    async pruneFinished(cutoffMs) {
      const { rows } = await pool.query<{ n: number }>(
        `WITH d AS (DELETE FROM outbox_documents t WHERE t.emr_synced = 1 AND t.updated_at < $1 AND (${FINAL} OR t.state = 'REJECTED') RETURNING t.external_id),
           h AS (DELETE FROM document_history WHERE external_id IN (SELECT external_id FROM d))
         SELECT count(*) AS n FROM d`,
        [cutoffMs],
      );
      return rows[0]!.n;
    },
  };
}
