// Mappings in PostgreSQL: the primary key of emr_mappings decides which record stands when replicas record at
// once (ON CONFLICT DO NOTHING; the loser reads the winner's). Found mappings are kept in memory: they never
// change (../mappings.ts).
import type { Clock } from '../../clock.ts';
import type { MappingEntityType } from '../../contract/api.ts';
import { ANY_ENTITY_TYPE, createFoundMappings, MAPPING_RECORD_SQL, type MappingLookup, type MappingStore, toMappingRecord } from '../mappings.ts';
import { putEntries } from './emr-state.ts';
import { type Pool, type PoolClient, withTransaction } from './pool.ts';

const FIND = 'SELECT emr_id FROM emr_mappings WHERE entity_type = $1 AND service_id = $2';

/** Records the mapping unless one stands; returns the one that stands. */
async function recordIn(client: Pool | PoolClient, clock: Clock, entityType: MappingEntityType, serviceId: string, emrId: string): Promise<string> {
  const inserted = await client.query<{ emr_id: string }>(
    `INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING emr_id`,
    [entityType, serviceId, emrId, clock.now()],
  );
  if (inserted.rows[0]) return inserted.rows[0].emr_id;
  // A separate statement: its snapshot sees the row whose insert this one waited for and then yielded to.
  const standing = await client.query<{ emr_id: string }>(FIND, [entityType, serviceId]);
  return standing.rows[0]!.emr_id;
}

export function createPostgresMappingStore(pool: Pool, clock: Clock): MappingStore {
  const found = createFoundMappings();
  return {
    async find(entityType, serviceId) {
      const known = found.get(entityType, serviceId);
      if (known !== undefined) return known;
      const { rows } = await pool.query<{ emr_id: string }>(FIND, [entityType, serviceId]);
      const stored = rows[0]?.emr_id;
      if (stored !== undefined) found.remember(entityType, serviceId, stored);
      return stored;
    },
    async record(entityType, serviceId, emrId) {
      const standing = await recordIn(pool, clock, entityType, serviceId, emrId);
      found.remember(entityType, serviceId, standing);
      return standing;
    },
    async link(entityType, serviceId, emrId, state) {
      const known = found.get(entityType, serviceId);
      if (known !== undefined) {
        if (state) await putEntries(pool, state.module, state.entries, clock.now());
        return known === emrId;
      }
      const standing = await withTransaction(pool, async (client) => {
        const s = await recordIn(client, clock, entityType, serviceId, emrId);
        if (s === emrId) {
          const now = clock.now();
          await client.query(
            `INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at) VALUES ($1, $2, $3, $4, $4)
             ON CONFLICT DO NOTHING`,
            [entityType, serviceId, emrId, now],
          );
        }
        if (state) await putEntries(client, state.module, state.entries, clock.now());
        return s;
      });
      found.remember(entityType, serviceId, standing);
      return standing === emrId;
    },
  };
}

/** Mappings looked up both ways (by the primary key, or by emr_mappings_emr). */
export function createPostgresMappingLookup(pool: Pool): MappingLookup {
  type Row = Parameters<typeof toMappingRecord>[0];
  return {
    async byServiceId(serviceId) {
      const { rows } = await pool.query<Row>(`${MAPPING_RECORD_SQL} WHERE ${ANY_ENTITY_TYPE} AND m.service_id = $1 ORDER BY m.entity_type`, [serviceId]);
      return rows.map(toMappingRecord);
    },
    async byEmrId(emrId, entityType) {
      const { rows } = await pool.query<Row>(
        `${MAPPING_RECORD_SQL} WHERE m.emr_id = $1 AND ($2::text IS NULL OR m.entity_type = $2) ORDER BY m.entity_type, m.service_id`,
        [emrId, entityType ?? null],
      );
      return rows.map(toMappingRecord);
    },
  };
}
