// What admins, the CLI and metrics read of the SQLite outbox (a document's history included), and its
// retention, which deletes a pruned document's history with it.
import type { Db } from '../../sqlite/open.ts';
import type { DocumentHistoryEntry, DocumentStore, OutboxRow, OutboxState, OutboxViews } from '../documents.ts';
import { FINAL } from './documents-sql.ts';

export function createSqliteOutboxViews(db: Db): OutboxViews & Pick<DocumentStore, 'pruneFinished'> {
  const get = db.prepare('SELECT * FROM outbox_documents WHERE external_id = ?');
  const byState = db.prepare('SELECT * FROM outbox_documents WHERE state = ? ORDER BY created_at DESC LIMIT ?');
  const all = db.prepare('SELECT * FROM outbox_documents ORDER BY created_at DESC LIMIT ?');
  const page = db.prepare(`
    SELECT * FROM outbox_documents
    WHERE (@status IS NULL OR state = @status) AND (@type IS NULL OR document_type = @type)
      AND (@since IS NULL OR created_at >= @since) AND (@until IS NULL OR created_at < @until)
      AND (@afterCreated IS NULL OR (created_at, external_id) < (@afterCreated, @afterId))
    ORDER BY created_at DESC, external_id DESC LIMIT @limit`);
  const oldestQueued = db.prepare("SELECT min(created_at) FROM outbox_documents WHERE state = 'queued'").pluck();
  const open = db.prepare("SELECT count(*) FROM outbox_documents WHERE state IN ('queued', 'HELD') OR emr_synced = 0").pluck();
  const countByState = db.prepare('SELECT state, count(*) AS count FROM outbox_documents GROUP BY state');
  const PRUNED = `emr_synced = 1 AND updated_at < ? AND (${FINAL} OR state = 'REJECTED')`;
  const pruneHistory = db.prepare(`DELETE FROM document_history WHERE external_id IN (SELECT external_id FROM outbox_documents WHERE ${PRUNED})`);
  const prune = db.prepare(`DELETE FROM outbox_documents WHERE ${PRUNED}`);
  const pruneAll = db.transaction((cutoffMs: number) => {
    pruneHistory.run(cutoffMs);
    return prune.run(cutoffMs).changes;
  });
  const history = db.prepare('SELECT at, status, attempt, detail FROM document_history WHERE external_id = ? ORDER BY id');
  return {
    get: async (externalId) => get.get(externalId) as OutboxRow | undefined,
    history: async (externalId) => history.all(externalId) as DocumentHistoryEntry[],
    list: async (state, limit = 200) => (state ? byState.all(state, limit) : all.all(limit)) as OutboxRow[],
    async page(f) {
      const rows = page.all({
        status: f.status ?? null,
        type: f.type ?? null,
        since: f.since ?? null,
        until: f.until ?? null,
        afterCreated: f.after?.createdAt ?? null,
        afterId: f.after?.externalId ?? null,
        limit: f.limit + 1,
      }) as OutboxRow[];
      if (rows.length <= f.limit) return { rows, next: null };
      const shown = rows.slice(0, f.limit);
      const last = shown[shown.length - 1]!;
      return { rows: shown, next: { createdAt: last.created_at, externalId: last.external_id } };
    },
    oldestQueuedCreatedAt: async () => (oldestQueued.get() as number | null) ?? undefined,
    openCount: async () => open.get() as number,
    countByState: async () => countByState.all() as { state: OutboxState; count: number }[],
    pruneFinished: async (cutoffMs) => pruneAll.immediate(cutoffMs),
  };
}
