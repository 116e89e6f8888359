// For test/sqlite/commit-queue.test.ts: opens the adapter's database as `serve` does and records mappings through
// the connection's commit queue with `ordered` durability (no fsync of their own) until killed, printing each
// one's number once its promise resolved.
// Run: node bin/run-ts.js test/sqlite/support/ordered-commits-forever.ts <db path>
import { createCommitQueue } from '../../../src/sqlite/commit-queue.ts';
import { openDatabase } from '../../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../../src/paths.ts';

const path = process.argv[2];
if (!path) throw new Error('usage: ordered-commits-forever.ts <db path>');
const db = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS });
const insert = db.prepare("INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES ('patient', ?, ?, ?)");
const commits = createCommitQueue(db);
let n = 0;
async function next(): Promise<void> {
  const i = n + 1;
  await commits.run(() => insert.run(`pat_${i}`, `Patient/${i}`, Date.now()), { durable: 'ordered' });
  n = i;
  process.stdout.write(`${n}\n`);
  setImmediate(next);
}
void next();
