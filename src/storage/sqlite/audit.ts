// The audit trail in SQLite: an entry and its targets in one transaction; pages newest first by id.
import type { Db } from '../../sqlite/open.ts';
import { type AuditRow, type AuditStore, toAuditRecord } from '../audit.ts';

export function createSqliteAuditStore(db: Db): AuditStore {
  const insert = db.prepare(
    'INSERT INTO audit_log (at, actor, door, action, targets, from_address, outcome) VALUES (@at, @actor, @door, @action, @targets, @from, @outcome)',
  );
  const insertTarget = db.prepare('INSERT OR IGNORE INTO audit_targets (audit_id, target) VALUES (?, ?)');
  const page = db.prepare(`
    SELECT id, at, actor, door, action, targets, from_address, outcome FROM audit_log
    WHERE (@actor IS NULL OR actor = @actor) AND (@action IS NULL OR action = @action)
      AND (@since IS NULL OR at >= @since) AND (@until IS NULL OR at < @until)
      AND (@before IS NULL OR id < @before)
      AND (@target IS NULL OR id IN (SELECT audit_id FROM audit_targets WHERE target = @target))
    ORDER BY id DESC LIMIT @limit`);
  const dropTargets = db.prepare('DELETE FROM audit_targets WHERE audit_id IN (SELECT id FROM audit_log WHERE at < ?)');
  const dropEntries = db.prepare('DELETE FROM audit_log WHERE at < ?');

  const record = db.transaction((e: Parameters<AuditStore['record']>[0]) => {
    const id = Number(insert.run({ ...e, targets: JSON.stringify(e.targets) }).lastInsertRowid);
    for (const t of e.targets) insertTarget.run(id, t);
    return id;
  });
  const prune = db.transaction((before: number) => {
    dropTargets.run(before);
    return dropEntries.run(before).changes;
  });
  return {
    record: async (entry) => record.immediate(entry),
    page: async (q) =>
      (
        page.all({
          actor: q.actor ?? null,
          action: q.action ?? null,
          target: q.target ?? null,
          since: q.since ?? null,
          until: q.until ?? null,
          before: q.before ?? null,
          limit: q.limit,
        }) as AuditRow[]
      ).map(toAuditRecord),
    prune: async (before) => prune.immediate(before),
  };
}
