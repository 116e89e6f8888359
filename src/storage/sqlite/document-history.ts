// The history rows of documents in SQLite: statements run inside the transaction of the outbox change they
// record (enqueue, a send's retry or outcome, an operator's retry, the scan's filings).
import type { Db } from '../../sqlite/open.ts';
import type { DocumentHistoryStatus, Outcome } from '../documents.ts';
import { outcomeValues } from '../documents.ts';
import { FINAL } from './documents-sql.ts';

export interface SqliteDocumentHistory {
  /** A row for the document as it stands now; `sent`: the row's attempt count is the attempt this records. */
  record(externalId: string, status: DocumentHistoryStatus, detail: string | null, sent?: boolean): void;
  /** Before an outcome is written: its row, unless the document is final or the outcome changes neither its status nor its code. */
  outcome(externalId: string, o: Outcome): void;
}

export function createSqliteDocumentHistory(db: Db, now: () => number): SqliteDocumentHistory {
  const record = db.prepare(`
    INSERT INTO document_history (external_id, at, status, attempt, detail)
    SELECT external_id, @now, @status, CASE WHEN @sent = 1 THEN attempts END, @detail FROM outbox_documents WHERE external_id = @externalId`);
  const outcome = db.prepare(`
    INSERT INTO document_history (external_id, at, status, attempt, detail)
    SELECT external_id, @now, @status, attempts, @detail FROM outbox_documents
    WHERE external_id = @externalId AND NOT ${FINAL} AND (state IS NOT @status OR error_code IS NOT @code)`);
  return {
    record(externalId, status, detail, sent = false) {
      record.run({ externalId, status, detail, sent: sent ? 1 : 0, now: now() });
    },
    outcome(externalId, o) {
      const v = outcomeValues(o);
      outcome.run({ externalId, status: v.state, code: v.code, detail: v.code ?? v.reason, now: now() });
    },
  };
}
