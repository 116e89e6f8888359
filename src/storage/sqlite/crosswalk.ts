// The crosswalk in SQLite (../crosswalk.ts): each write is one immediate transaction, so a mapping, its outbox row
// and the wake-up of the events waiting for it commit together.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import {
  CROSSWALK_ITEM_SQL,
  type CrosswalkEntityType,
  type CrosswalkRow,
  type CrosswalkStore,
  crosswalkListSql,
  recordKey,
  toCrosswalkItem,
} from '../crosswalk.ts';
import type { LackedRecord } from '../processing.ts';

/** Makes due again the waiting events of `ids`, and drops their waits (they resolve again when tried). */
const WAKE_SQL = `UPDATE processing SET state = 'pending', last_error = NULL WHERE state = 'waiting' AND inbox_id IN (SELECT value FROM json_each(?))`;

export function createSqliteCrosswalkStore(db: Db, clock: Clock): CrosswalkStore {
  const one = db.prepare(`${CROSSWALK_ITEM_SQL} WHERE c.entity_type = ? AND c.service_id = ?`);
  const mappedOne = db.prepare('SELECT emr_id FROM crosswalk WHERE entity_type = ? AND service_id = ? AND emr_id IS NOT NULL').pluck();
  const need = db.prepare(`INSERT INTO crosswalk (entity_type, service_id, name, needed_at, updated_at) VALUES (@t, @s, @name, @now, @now)
    ON CONFLICT (entity_type, service_id) DO UPDATE SET name = coalesce(excluded.name, crosswalk.name), needed_at = coalesce(crosswalk.needed_at, excluded.needed_at)
    WHERE crosswalk.emr_id IS NULL`);
  const upsert = db.prepare(`INSERT INTO crosswalk (entity_type, service_id, emr_id, source, updated_at) VALUES (@t, @s, @emrId, @source, @now)
    ON CONFLICT (entity_type, service_id) DO UPDATE SET emr_id = excluded.emr_id, source = excluded.source, updated_at = excluded.updated_at`);
  const post = db.prepare(`INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at) VALUES (@t, @s, @emrId, @now, @now)
    ON CONFLICT (entity_type, service_id) DO UPDATE SET external_id = excluded.external_id, state = 'pending', attempts = 0, next_attempt_at = 0,
      last_error = NULL, updated_at = excluded.updated_at
    WHERE mapping_outbox.external_id <> excluded.external_id`);
  const waitersOf = db.prepare('SELECT DISTINCT inbox_id FROM crosswalk_waits WHERE entity_type = ? AND service_id = ?').pluck();
  const fullyMapped = db.prepare(`SELECT p.inbox_id FROM processing p WHERE p.state = 'waiting' AND NOT EXISTS (
      SELECT 1 FROM crosswalk_waits w LEFT JOIN crosswalk c ON c.entity_type = w.entity_type AND c.service_id = w.service_id
      WHERE w.inbox_id = p.inbox_id AND c.emr_id IS NULL)`);
  const wake = db.prepare(WAKE_SQL);
  const dropWaits = db.prepare('DELETE FROM crosswalk_waits WHERE inbox_id IN (SELECT value FROM json_each(?))');
  const remove = db.prepare('DELETE FROM crosswalk WHERE entity_type = ? AND service_id = ? AND emr_id IS NOT NULL');
  const holders = db.prepare('SELECT service_id FROM crosswalk WHERE entity_type = ? AND emr_id = ? ORDER BY service_id').pluck();
  const allMapped = db.prepare('SELECT entity_type, service_id, emr_id FROM crosswalk WHERE emr_id IS NOT NULL ORDER BY entity_type, service_id');
  const waiting = db.prepare(`SELECT w.entity_type, count(DISTINCT w.inbox_id) AS events, min(w.since) AS oldest
    FROM crosswalk_waits w WHERE w.ord = (SELECT min(x.ord) FROM crosswalk_waits x WHERE x.inbox_id = w.inbox_id) GROUP BY w.entity_type`);

  const newestWaiter = db.prepare('SELECT max(inbox_id) FROM crosswalk_waits WHERE entity_type = ? AND service_id = ?').pluck();

  const wakeIds = (ids: number[]): number => {
    if (!ids.length) return 0;
    const json = JSON.stringify(ids);
    dropWaits.run(json);
    return wake.run(json).changes;
  };
  const setTx = db.transaction((r: LackedRecord, emrId: string, source: string, toService: boolean) => {
    const now = clock.now();
    upsert.run({ t: r.entityType, s: r.serviceId, emrId, source, now });
    if (toService) post.run({ t: r.entityType, s: r.serviceId, emrId, now });
    return wakeIds(waitersOf.all(r.entityType, r.serviceId) as number[]);
  });
  const needTx = db.transaction((records: readonly { entityType: string; serviceId: string; name: string | null }[]) => {
    const now = clock.now();
    for (const r of records) need.run({ t: r.entityType, s: r.serviceId, name: r.entityType === 'patient' ? null : r.name, now });
  });
  const wakeMappedTx = db.transaction(() => wakeIds((fullyMapped.all() as { inbox_id: number }[]).map((r) => r.inbox_id)));

  return {
    async mapped(records) {
      const found = new Map<string, string>();
      for (const r of records) {
        const emrId = mappedOne.get(r.entityType, r.serviceId) as string | undefined;
        if (emrId !== undefined) found.set(recordKey(r), emrId);
      }
      return found;
    },
    async get(r) {
      const row = one.get(r.entityType, r.serviceId) as CrosswalkRow | undefined;
      return row ? toCrosswalkItem(row) : undefined;
    },
    need: async (records) => needTx.immediate(records),
    set: async (r, emrId, source, opts) => ({ woken: setTx.immediate(r, emrId, source, opts.post) }),
    remove: async (r) => remove.run(r.entityType, r.serviceId).changes > 0,
    holdersOf: async (entityType, emrId) => holders.all(entityType, emrId) as string[],
    async list(q) {
      const { where, params } = crosswalkListSql(q, () => '?');
      const rows = db.prepare(`${CROSSWALK_ITEM_SQL} ${where} ORDER BY c.entity_type, c.service_id LIMIT ?`).all(...params, q.limit) as CrosswalkRow[];
      return rows.map(toCrosswalkItem);
    },
    allMapped: async () =>
      (allMapped.all() as { entity_type: CrosswalkEntityType; service_id: string; emr_id: string }[]).map((r) => ({
        entityType: r.entity_type,
        serviceId: r.service_id,
        emrId: r.emr_id,
      })),
    wakeMapped: async () => wakeMappedTx.immediate(),
    waiting: async () =>
      (waiting.all() as { entity_type: CrosswalkEntityType; events: number; oldest: number | null }[]).map((r) => ({
        entityType: r.entity_type,
        events: r.events,
        oldestSince: r.oldest,
      })),
    newestWaiter: async (r) => (newestWaiter.get(r.entityType, r.serviceId) as number | null) ?? undefined,
  };
}
