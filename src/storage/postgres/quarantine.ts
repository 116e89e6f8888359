// The quarantine in PostgreSQL (../quarantine.ts), shared by every replica. An admission holds a transaction-
// scoped advisory lock of its own, so two replicas' admissions cannot both count the same free room; the unique
// eventId decides between two admissions of one event. Apply locks the row (FOR UPDATE), so two operators on two
// replicas apply it once: the inbox row, its intake row, its count as received (./received-count.ts) and the
// wake-up of every replica (NOTIFY at the commit) in the same transaction as the quarantine row's change.
import type { Clock } from '../../clock.ts';
import { createClearSealer, type Sealer } from '../../sealing/sealer.ts';
import { type ApplyOutcome, QUARANTINE_COLUMNS, type QuarantineRow, type QuarantineStore, toQuarantinedEvent } from '../quarantine.ts';
import { INBOX_BODY, QUARANTINE_BODY, sealContext } from '../sealed-contexts.ts';
import { WORK_CHANNEL } from './coordination.ts';
import { type Pool, withTransaction } from './pool.ts';
import { countReceived } from './received-count.ts';

const ADMISSION_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('emr-bridge:quarantine-admission', 0))";
const USAGE =
  "SELECT count(*) AS events, coalesce(sum(octet_length(body)), 0) AS bytes FROM webhook_quarantine WHERE state = 'quarantined' AND body IS NOT NULL";
const WHERE_IS = `SELECT EXISTS (SELECT 1 FROM inbox_events WHERE event_id = $1) AS inbox,
                         EXISTS (SELECT 1 FROM webhook_quarantine WHERE event_id = $1) AS quarantine`;

const INTO_INBOX = `WITH ins AS (
    INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (event_id) DO NOTHING RETURNING id, received_at
  ), intake AS (
    INSERT INTO inbox_intake (inbox_id) SELECT id FROM ins
  ), counted AS (${countReceived('ins')})
  SELECT id, pg_notify('${WORK_CHANNEL}', 'events') FROM ins`;

export function createPostgresQuarantineStore(pool: Pool, clock: Clock, sealer: Sealer = createClearSealer()): QuarantineStore {
  const one = async (eventId: string) =>
    (await pool.query<QuarantineRow>(`SELECT ${QUARANTINE_COLUMNS} FROM webhook_quarantine WHERE event_id = $1`, [eventId])).rows[0];
  return {
    async usage() {
      const { rows } = await pool.query<{ events: number; bytes: string | number }>(USAGE);
      return { events: Number(rows[0]!.events), bytes: Number(rows[0]!.bytes) };
    },
    async whereIs(eventId) {
      const { rows } = await pool.query<{ inbox: boolean; quarantine: boolean }>(WHERE_IS, [eventId]);
      if (rows[0]!.inbox) return 'inbox';
      return rows[0]!.quarantine ? 'quarantine' : undefined;
    },
    async admit(entry, capacityBytes) {
      const body = sealer.sealBytes(entry.body, sealContext(QUARANTINE_BODY, entry.eventId));
      return withTransaction(pool, async (client) => {
        await client.query(ADMISSION_LOCK);
        const known = (await client.query<{ inbox: boolean; quarantine: boolean }>(WHERE_IS, [entry.eventId])).rows[0]!;
        if (known.inbox) return 'in_inbox';
        if (known.quarantine) return 'duplicate';
        const used = Number((await client.query<{ bytes: string | number }>(USAGE)).rows[0]!.bytes);
        if (used + body.length > capacityBytes) return 'full';
        // A concurrent admission of the same eventId waits for this one's commit, then inserts nothing.
        const r = await client.query(
          `INSERT INTO webhook_quarantine (event_id, event_type, headers, size, body, received_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (event_id) DO NOTHING`,
          [entry.eventId, entry.eventType, JSON.stringify(entry.headers), entry.body.byteLength, body, entry.receivedAt],
        );
        return r.rowCount === 1 ? 'stored' : 'duplicate';
      });
    },
    async page(q) {
      const { rows } = await pool.query<QuarantineRow>(
        `SELECT ${QUARANTINE_COLUMNS} FROM webhook_quarantine
         WHERE state = $1 AND id > $2
           AND ($3::text IS NULL OR event_type = $3) AND ($4::bigint IS NULL OR received_at >= $4) AND ($5::bigint IS NULL OR received_at < $5)
         ORDER BY id LIMIT $6`,
        [q.state, q.afterId, q.type ?? null, q.since ?? null, q.until ?? null, q.limit],
      );
      return rows.map((r) => ({ id: Number(r.id), event: toQuarantinedEvent(r) }));
    },
    async get(eventId) {
      const r = await one(eventId);
      return r && toQuarantinedEvent(r);
    },
    apply: (eventId, { maxBodyBytes, by }) =>
      withTransaction(pool, async (client): Promise<ApplyOutcome> => {
        const { rows } = await client.query<QuarantineRow & { body: Buffer | null }>(
          `SELECT ${QUARANTINE_COLUMNS}, body FROM webhook_quarantine WHERE event_id = $1 FOR UPDATE`,
          [eventId],
        );
        const r = rows[0];
        if (!r) return { outcome: 'not_found' };
        const event = toQuarantinedEvent(r);
        if (r.state !== 'quarantined' || r.body === null) return { outcome: 'not_quarantined', event };
        if (event.size > maxBodyBytes) return { outcome: 'too_large', event };
        const now = clock.now();
        const plain = sealer.open(r.body, sealContext(QUARANTINE_BODY, eventId));
        const inserted = await client.query(INTO_INBOX, [eventId, r.event_type, r.headers, sealer.sealBytes(plain, sealContext(INBOX_BODY, eventId)), now]);
        const { rows: after } = await client.query<QuarantineRow>(
          `UPDATE webhook_quarantine SET state = 'applied', body = NULL, applied_by = $2, applied_at = $3 WHERE event_id = $1
           RETURNING ${QUARANTINE_COLUMNS}`,
          [eventId, by, now],
        );
        return { outcome: 'applied', inbox: inserted.rowCount === 1 ? 'stored' : 'duplicate', event: toQuarantinedEvent(after[0]!) };
      }),
    async dismiss(eventId, reason, by) {
      const r = await pool.query(
        `UPDATE webhook_quarantine SET state = 'dismissed', body = NULL, dismissed_reason = $2, dismissed_by = $3, dismissed_at = $4
         WHERE event_id = $1 AND state = 'quarantined'`,
        [eventId, reason, by, clock.now()],
      );
      return r.rowCount === 1;
    },
    async prune(before) {
      const r = await pool.query(`DELETE FROM webhook_quarantine WHERE state <> 'quarantined' AND coalesce(applied_at, dismissed_at) < $1`, [before]);
      return r.rowCount ?? 0;
    },
  };
}
