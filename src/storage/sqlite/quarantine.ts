// The quarantine in SQLite (../quarantine.ts): one immediate transaction per admission, so the capacity check
// and the insert see the same rows; apply moves the event into inbox_events (a new row: intake takes it in after
// its cursor, as any received now, and counted as received now: ./received-count.ts) and marks the quarantine row
// applied, its body dropped, in one transaction.
import type { Clock } from '../../clock.ts';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import type { Db } from '../../sqlite/open.ts';
import type { Coordination } from '../coordination.ts';
import { type ApplyOutcome, QUARANTINE_COLUMNS, type QuarantineRow, type QuarantineStore, toQuarantinedEvent } from '../quarantine.ts';
import { INBOX_BODY, QUARANTINE_BODY, sealContext } from '../sealed-contexts.ts';
import { prepareReceivedCount } from './received-count.ts';

export interface SqliteQuarantineOptions {
  /** Told 'events' when apply stored a new inbox row (the processor's wake-up). */
  coordination?: Pick<Coordination, 'notify'>;
}

export function createSqliteQuarantineStore(db: Db, clock: Clock, sealer: Sealer = createClearSealer(), opts: SqliteQuarantineOptions = {}): QuarantineStore {
  const usage = db.prepare(
    "SELECT count(*) AS events, coalesce(sum(length(body)), 0) AS bytes FROM webhook_quarantine WHERE state = 'quarantined' AND body IS NOT NULL",
  );
  const inInbox = db.prepare('SELECT 1 FROM inbox_events WHERE event_id = ?').pluck();
  const inQuarantine = db.prepare('SELECT 1 FROM webhook_quarantine WHERE event_id = ?').pluck();
  const insert = db.prepare(
    `INSERT INTO webhook_quarantine (event_id, event_type, headers, size, body, received_at) VALUES (@eventId, @eventType, @headers, @size, @body, @receivedAt)`,
  );
  const one = db.prepare(`SELECT ${QUARANTINE_COLUMNS} FROM webhook_quarantine WHERE event_id = ?`);
  const bodyOf = db.prepare('SELECT body FROM webhook_quarantine WHERE event_id = ?').pluck();
  const page = db.prepare(`SELECT ${QUARANTINE_COLUMNS} FROM webhook_quarantine
    WHERE state = @state AND id > @after
      AND (@type IS NULL OR event_type = @type) AND (@since IS NULL OR received_at >= @since) AND (@until IS NULL OR received_at < @until)
    ORDER BY id LIMIT @limit`);
  const intoInbox = db.prepare(
    'INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING',
  );
  const countReceived = prepareReceivedCount(db);
  const markApplied = db.prepare(
    "UPDATE webhook_quarantine SET state = 'applied', body = NULL, applied_by = ?, applied_at = ? WHERE event_id = ? AND state = 'quarantined'",
  );
  const dismiss =
    db.prepare(`UPDATE webhook_quarantine SET state = 'dismissed', body = NULL, dismissed_reason = @reason, dismissed_by = @by, dismissed_at = @now
    WHERE event_id = @eventId AND state = 'quarantined'`);

  const prune = db.prepare(`DELETE FROM webhook_quarantine WHERE state <> 'quarantined' AND coalesce(applied_at, dismissed_at) < ?`);

  const admit = db.transaction(
    (row: { eventId: string; eventType: string; headers: string; size: number; body: Buffer; receivedAt: number }, capacity: number) => {
      if (inInbox.get(row.eventId)) return 'in_inbox' as const;
      if (inQuarantine.get(row.eventId)) return 'duplicate' as const;
      const used = usage.get() as { bytes: number };
      if (used.bytes + row.body.length > capacity) return 'full' as const;
      insert.run(row);
      return 'stored' as const;
    },
  );

  const apply = db.transaction((eventId: string, maxBodyBytes: number, by: string): ApplyOutcome => {
    const r = one.get(eventId) as QuarantineRow | undefined;
    if (!r) return { outcome: 'not_found' };
    const event = toQuarantinedEvent(r);
    if (r.state !== 'quarantined') return { outcome: 'not_quarantined', event };
    if (event.size > maxBodyBytes) return { outcome: 'too_large', event };
    const now = clock.now();
    const plain = sealer.open(bodyOf.get(eventId) as Buffer, sealContext(QUARANTINE_BODY, eventId));
    const stored = intoInbox.run(eventId, r.event_type, r.headers, sealer.sealBytes(plain, sealContext(INBOX_BODY, eventId)), now).changes === 1;
    if (stored) countReceived(now, 1);
    markApplied.run(by, now, eventId);
    return { outcome: 'applied', inbox: stored ? 'stored' : 'duplicate', event: toQuarantinedEvent(one.get(eventId) as QuarantineRow) };
  });

  return {
    async usage() {
      const u = usage.get() as { events: number; bytes: number };
      return { events: u.events, bytes: u.bytes };
    },
    async whereIs(eventId) {
      if (inInbox.get(eventId)) return 'inbox';
      return inQuarantine.get(eventId) ? 'quarantine' : undefined;
    },
    async admit(entry, capacityBytes) {
      // Sealed before the transaction: the write lock is held for the writes only.
      const body = sealer.sealBytes(entry.body, sealContext(QUARANTINE_BODY, entry.eventId));
      return admit.immediate(
        {
          eventId: entry.eventId,
          eventType: entry.eventType,
          headers: JSON.stringify(entry.headers),
          size: entry.body.byteLength,
          body,
          receivedAt: entry.receivedAt,
        },
        capacityBytes,
      );
    },
    async page(q) {
      const rows = page.all({
        state: q.state,
        after: q.afterId,
        type: q.type ?? null,
        since: q.since ?? null,
        until: q.until ?? null,
        limit: q.limit,
      }) as QuarantineRow[];
      return rows.map((r) => ({ id: r.id, event: toQuarantinedEvent(r) }));
    },
    async get(eventId) {
      const r = one.get(eventId) as QuarantineRow | undefined;
      return r && toQuarantinedEvent(r);
    },
    async apply(eventId, { maxBodyBytes, by }) {
      const result = apply.immediate(eventId, maxBodyBytes, by);
      if (result.outcome === 'applied' && result.inbox === 'stored') opts.coordination?.notify('events');
      return result;
    },
    async dismiss(eventId, reason, by) {
      return dismiss.run({ eventId, reason, by, now: clock.now() }).changes === 1;
    },
    prune: async (before) => prune.run(before).changes,
  };
}
