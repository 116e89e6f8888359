// The crosswalk in PostgreSQL (../crosswalk.ts), shared by every replica. A mapping's write locks its row first,
// so it and an event's waiting outcome (which reads the same rows FOR SHARE: ./processing.ts) are ordered: the
// outcome sees the mapping, or the mapping sees the outcome's waits and wakes the event. The wake-up NOTIFYs the
// other replicas in the same transaction (delivered at commit).
import type { Clock } from '../../clock.ts';
import { CROSSWALK_ITEM_SQL, type CrosswalkEntityType, type CrosswalkRow, type CrosswalkStore, crosswalkListSql, recordKey } from '../crosswalk.ts';
import { toCrosswalkItem } from '../crosswalk.ts';
import { WORK_CHANNEL } from './coordination.ts';
import { type Pool, type PoolClient, withTransaction } from './pool.ts';

/** Makes the waiting events of `ids` due again, drops their waits, and tells every replica. */
async function wakeIds(client: PoolClient, ids: number[]): Promise<number> {
  if (!ids.length) return 0;
  await client.query('DELETE FROM crosswalk_waits WHERE inbox_id = ANY($1::bigint[])', [ids]);
  const woken = await client.query(`UPDATE processing SET state = 'pending', last_error = NULL WHERE state = 'waiting' AND inbox_id = ANY($1::bigint[])`, [
    ids,
  ]);
  if (woken.rowCount) await client.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, 'events']);
  return woken.rowCount ?? 0;
}

export function createPostgresCrosswalkStore(pool: Pool, clock: Clock): CrosswalkStore {
  return {
    async mapped(records) {
      const found = new Map<string, string>();
      if (!records.length) return found;
      const { rows } = await pool.query<{ entity_type: string; service_id: string; emr_id: string }>(
        `SELECT c.entity_type, c.service_id, c.emr_id FROM crosswalk c JOIN unnest($1::text[], $2::text[]) AS k(t, s)
         ON c.entity_type = k.t AND c.service_id = k.s WHERE c.emr_id IS NOT NULL`,
        [records.map((r) => r.entityType), records.map((r) => r.serviceId)],
      );
      for (const r of rows) found.set(recordKey({ entityType: r.entity_type as CrosswalkEntityType, serviceId: r.service_id }), r.emr_id);
      return found;
    },
    async get(r) {
      const { rows } = await pool.query<CrosswalkRow>(`${CROSSWALK_ITEM_SQL} WHERE c.entity_type = $1 AND c.service_id = $2`, [r.entityType, r.serviceId]);
      return rows[0] ? toCrosswalkItem(rows[0]) : undefined;
    },
    async need(records) {
      if (!records.length) return;
      await pool.query(
        `INSERT INTO crosswalk (entity_type, service_id, name, needed_at, updated_at)
         SELECT t, s, n, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS k(t, s, n)
         ON CONFLICT (entity_type, service_id) DO UPDATE SET name = coalesce(excluded.name, crosswalk.name),
           needed_at = coalesce(crosswalk.needed_at, excluded.needed_at)
         WHERE crosswalk.emr_id IS NULL`,
        [records.map((r) => r.entityType), records.map((r) => r.serviceId), records.map((r) => (r.entityType === 'patient' ? null : r.name)), clock.now()],
      );
    },
    set: (r, emrId, source, opts) =>
      withTransaction(pool, async (client) => {
        const now = clock.now();
        await client.query(
          `INSERT INTO crosswalk (entity_type, service_id, emr_id, source, updated_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (entity_type, service_id) DO UPDATE SET emr_id = excluded.emr_id, source = excluded.source, updated_at = excluded.updated_at`,
          [r.entityType, r.serviceId, emrId, source, now],
        );
        if (opts.post)
          await client.query(
            `INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at) VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT (entity_type, service_id) DO UPDATE SET external_id = excluded.external_id, state = 'pending', attempts = 0,
               next_attempt_at = 0, last_error = NULL, updated_at = excluded.updated_at
             WHERE mapping_outbox.external_id <> excluded.external_id`,
            [r.entityType, r.serviceId, emrId, now],
          );
        const { rows } = await client.query<{ inbox_id: string }>('SELECT DISTINCT inbox_id FROM crosswalk_waits WHERE entity_type = $1 AND service_id = $2', [
          r.entityType,
          r.serviceId,
        ]);
        return {
          woken: await wakeIds(
            client,
            rows.map((x) => Number(x.inbox_id)),
          ),
        };
      }),
    async remove(r) {
      const res = await pool.query('DELETE FROM crosswalk WHERE entity_type = $1 AND service_id = $2 AND emr_id IS NOT NULL', [r.entityType, r.serviceId]);
      return (res.rowCount ?? 0) > 0;
    },
    async holdersOf(entityType, emrId) {
      const { rows } = await pool.query<{ service_id: string }>('SELECT service_id FROM crosswalk WHERE entity_type = $1 AND emr_id = $2 ORDER BY service_id', [
        entityType,
        emrId,
      ]);
      return rows.map((r) => r.service_id);
    },
    async list(q) {
      let n = 0;
      const { where, params } = crosswalkListSql(q, () => `$${++n}`);
      const { rows } = await pool.query<CrosswalkRow>(`${CROSSWALK_ITEM_SQL} ${where} ORDER BY c.entity_type, c.service_id LIMIT $${++n}`, [
        ...params,
        q.limit,
      ]);
      return rows.map(toCrosswalkItem);
    },
    async allMapped() {
      const { rows } = await pool.query<{ entity_type: CrosswalkEntityType; service_id: string; emr_id: string }>(
        'SELECT entity_type, service_id, emr_id FROM crosswalk WHERE emr_id IS NOT NULL ORDER BY entity_type, service_id',
      );
      return rows.map((r) => ({ entityType: r.entity_type, serviceId: r.service_id, emrId: r.emr_id }));
    },
    wakeMapped: () =>
      withTransaction(pool, async (client) => {
        const { rows } = await client.query<{ inbox_id: string }>(
          `SELECT p.inbox_id FROM processing p WHERE p.state = 'waiting' AND NOT EXISTS (
             SELECT 1 FROM crosswalk_waits w LEFT JOIN crosswalk c ON c.entity_type = w.entity_type AND c.service_id = w.service_id
             WHERE w.inbox_id = p.inbox_id AND c.emr_id IS NULL)
           FOR UPDATE OF p SKIP LOCKED`,
        );
        return wakeIds(
          client,
          rows.map((r) => Number(r.inbox_id)),
        );
      }),
    async waiting() {
      const { rows } = await pool.query<{ entity_type: CrosswalkEntityType; events: string; oldest: string | null }>(
        `SELECT w.entity_type, count(DISTINCT w.inbox_id) AS events, min(w.since) AS oldest FROM crosswalk_waits w
         WHERE w.ord = (SELECT min(x.ord) FROM crosswalk_waits x WHERE x.inbox_id = w.inbox_id) GROUP BY w.entity_type`,
      );
      return rows.map((r) => ({ entityType: r.entity_type, events: Number(r.events), oldestSince: r.oldest === null ? null : Number(r.oldest) }));
    },
    async newestWaiter(r) {
      const { rows } = await pool.query<{ id: string | null }>('SELECT max(inbox_id) AS id FROM crosswalk_waits WHERE entity_type = $1 AND service_id = $2', [
        r.entityType,
        r.serviceId,
      ]);
      return rows[0]?.id == null ? undefined : Number(rows[0].id);
    },
  };
}
