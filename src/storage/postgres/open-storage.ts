// The PostgreSQL storage of one replica: a connection pool, the schema checked (never migrated here: replicas
// must not race to migrate; `npx emr-bridge migrate` does it), the stores on that pool, and coordination
// through advisory locks and LISTEN/NOTIFY.
import { createPostgresEmrState } from './emr-state.ts';
import type { Storage, StorageDeps } from '../index.ts';
import { createPostgresAuditStore } from './audit.ts';
import { createPostgresConsoleSessionStore } from './console-sessions.ts';
import { createPostgresCoordination } from './coordination.ts';
import { createPostgresDocumentStore } from './documents.ts';
import { createPostgresEmrDowntimeStore } from './emr-downtime.ts';
import { createPostgresInboxStore } from './inbox.ts';
import { checkPostgresSchema, describeDatabaseUrl } from './migrate.ts';
import { createPool } from './pool.ts';
import { createPostgresProcessorStores } from './processor-stores.ts';
import { createPostgresQuarantineStore } from './quarantine.ts';
import { createPostgresSignInFailures } from './sign-in-failures.ts';

export async function openPostgresStorage(url: string, deps: StorageDeps): Promise<Storage> {
  const where = describeDatabaseUrl(url);
  const logger = deps.logger.child({ component: 'database' });
  const pool = createPool(url, { logger, applicationName: 'emr-bridge' });
  try {
    await checkPostgresSchema(pool, where);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const coordination = createPostgresCoordination({ pool, url, logger });
  const processor = createPostgresProcessorStores(pool, deps.clock, deps.sealer ? { sealer: deps.sealer } : {});
  return {
    engine: 'postgres',
    where,
    inbox: createPostgresInboxStore(pool),
    processor,
    documents: createPostgresDocumentStore(pool, deps.clock, deps.sealer),
    coordination,
    audit: createPostgresAuditStore(pool),
    consoleSessions: createPostgresConsoleSessionStore(pool),
    signInFailures: createPostgresSignInFailures(pool),
    emrState: createPostgresEmrState(pool, deps.clock),
    emrDowntime: createPostgresEmrDowntimeStore(pool),
    quarantine: createPostgresQuarantineStore(pool, deps.clock, deps.sealer),
    async close() {
      await processor.close();
      await coordination.close();
      await pool.end();
    },
  };
}
