// The inbox in PostgreSQL, shared by every replica. A batch is ONE statement, so one transaction and one round
// trip: the inbox rows (a duplicate eventId, stored by any replica, inserts nothing: the unique constraint
// decides, and a concurrent insert of the same eventId waits for the other's commit), their inbox_intake rows
// (the processor's queue of rows not yet taken in, db/postgres/001_schema.sql), and a NOTIFY of 'events' on
// the work channel, which PostgreSQL delivers at the commit, once however many rows notified it; and the batch's
// count per minute of received time in inbox_minutes (what the console calls received), keyed by the backend that
// runs the statement, so that replicas committing at once never wait on one counter row
// (db/postgres/012_inbox_minutes.sql).
//
// Within a batch the rows are inserted in eventId order: each row's unique-index entry is locked as it is
// inserted, so two replicas' batches sharing eventIds in different orders would deadlock (one of them aborted
// after deadlock_timeout), and in one order they cannot. The requests of a batch arrived together, with no
// order between them to keep (each entity's order is the processor's, by occurredAt and inbox order).
import { randomBytes } from 'node:crypto';
import type { InboxStore } from '../inbox.ts';
import { WORK_CHANNEL } from './coordination.ts';
import type { Pool } from './pool.ts';
import { countReceived } from './received-count.ts';

/** About one webhook, and random so that compression cannot make it smaller. */
const PROBE_BYTES = 4096;

/** The same text for every batch size (the rows travel as arrays), so each connection prepares it once. */
const INSERT_BATCH = {
  name: 'emr-bridge-inbox-insert',
  text: `WITH ins AS (
      INSERT INTO inbox_events (event_id, event_type, headers, body, received_at, trace_context)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::bigint[], $6::text[]) AS r (event_id, event_type, headers, body, received_at, trace_context)
      ORDER BY r.event_id
      ON CONFLICT (event_id) DO NOTHING
      RETURNING id, event_id, received_at
    ), intake AS (
      INSERT INTO inbox_intake (inbox_id) SELECT id FROM ins
    ), counted AS (${countReceived('ins')})
    SELECT event_id, pg_notify('${WORK_CHANNEL}', 'events') FROM ins`,
};

const PROBE = {
  name: 'emr-bridge-store-probe',
  text: `WITH ins AS (INSERT INTO store_probe (probed_at, pad) VALUES ($1, $2) RETURNING id)
    DELETE FROM store_probe WHERE id <> (SELECT id FROM ins)`,
};

/** A read-only server (a standby) or database: SQLSTATE 25006, as a write there would fail. */
const CHECK_WRITABLE = "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS read_only";

export function createPostgresInboxStore(pool: Pool): InboxStore {
  let checking: Promise<void> | undefined;
  return {
    async insertBatch(rows) {
      const n = rows.length;
      const ids = new Array<string>(n);
      const types = new Array<string>(n);
      const headers = new Array<string>(n);
      const bodies = new Array<Uint8Array>(n);
      const times = new Array<number>(n);
      const traces = new Array<string | null>(n);
      for (let i = 0; i < n; i++) {
        const r = rows[i]!;
        ids[i] = r.eventId;
        types[i] = r.eventType;
        headers[i] = JSON.stringify(r.headers);
        bodies[i] = asBuffer(r.body);
        times[i] = r.receivedAt;
        traces[i] = r.traceContext ?? null;
      }
      const { rows: stored } = await pool.query<{ event_id: string }>({ ...INSERT_BATCH, values: [ids, types, headers, bodies, times, traces] });
      return duplicateFlags(ids, stored);
    },
    async probe(nowMs) {
      await pool.query({ ...PROBE, values: [nowMs, randomBytes(PROBE_BYTES)] });
    },
    checkWritable() {
      // One question in flight however often readiness asks.
      checking ??= pool
        .query<{ read_only: boolean }>(CHECK_WRITABLE)
        .then(({ rows }) => {
          if (rows[0]?.read_only) throw Object.assign(new Error('the database is read-only'), { code: '25006' });
        })
        .finally(() => {
          checking = undefined;
        });
      return checking;
    },
  };
}

/** Per row: a duplicate unless this statement stored its eventId, and only its first row in the batch. */
function duplicateFlags(ids: string[], stored: { event_id: string }[]): boolean[] {
  const fresh = new Set<string>();
  for (const s of stored) fresh.add(s.event_id);
  const flags = new Array<boolean>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    flags[i] = !fresh.delete(id);
  }
  return flags;
}

const asBuffer = (body: Uint8Array): Buffer => (Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
