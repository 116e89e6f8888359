// For test/sqlite/checkpoint.test.ts: opens the adapter's database as `serve` does (checkpoint worker
// included) and commits 4-row inbox transactions until killed, printing each commit's number once it returned.
// Run: node bin/run-ts.js test/sqlite/support/commit-forever.ts <db path>
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../../src/paths.ts';

const path = process.argv[2];
if (!path) throw new Error('usage: commit-forever.ts <db path>');
const db = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS, checkpoints: { maxWalBytes: 512 * 1024, intervalMs: 5 } });
const insert = db.prepare('INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, ?, ?, ?, ?)');
const body = Buffer.alloc(1500, 0x7b);
const commit = db.transaction(() => {
  for (let i = 0; i < 4; i++) insert.run(randomUUID(), 'appointment.created', '{}', body, Date.now());
});
let n = 0;
function next(): void {
  commit.immediate();
  n++;
  process.stdout.write(`${n}\n`);
  setImmediate(next);
}
next();
