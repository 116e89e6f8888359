// A pusher in a process of its own, for the crash test: `send` queues one document and sends it;
// `resume` starts as a restarted adapter does (recover(), then a pass) and finishes what the killed one left.
// Run: node bin/run-ts.js test/support/pusher-process.ts <db> <serviceUrl> <apiKey> <send|resume> <externalId>
import { systemClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createPusher } from '../../src/pusher/index.ts';
import { createServiceClient } from '../../src/service-client/client.ts';
import { createSqliteCoordination } from '../../src/storage/sqlite/coordination.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { createSqliteMappingStore } from '../../src/storage/sqlite/mappings.ts';
import { PDF } from './simulator-fixture.ts';

const [dbPath, serviceUrl, apiKey, mode, externalId] = process.argv.slice(2) as [string, string, string, string, string];
const db = openDatabase({ path: dbPath, migrationsDir: ADAPTER_MIGRATIONS });
const serviceClient = createServiceClient({ baseUrl: serviceUrl, apiKey, timeoutMs: 10_000, clock: systemClock });
const pusher = createPusher({
  documents: createSqliteDocumentStore(db, systemClock),
  mappings: createSqliteMappingStore(db, systemClock),
  coordination: createSqliteCoordination(),
  clock: systemClock,
  logger: silentLogger(),
  emr: createMemoryEmr(),
  serviceClient,
  config: parseConfig({}),
});
if (mode === 'send') {
  await pusher.enqueue('lab_report', {
    externalId,
    patientPhone: '+15550401234',
    patientName: 'Synthetic Patient',
    label: 'Crash test report',
    file: { base64: PDF.toString('base64'), filename: 'crash.pdf' },
  });
  process.stdout.write('sending\n');
}
if (mode === 'resume') process.stdout.write(`recovered ${await pusher.recover()}\n`);
await pusher.runOnce();
process.stdout.write(`${(await pusher.outbox.get(externalId))?.state}\n`);
await serviceClient.close();
db.close();
