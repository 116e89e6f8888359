// Inbox commit benchmark: how long one group commit holds the event loop, with SQLite checkpointing inside
// commits (its default, the baseline) and with checkpoints on the background thread (what the adapter
// runs, src/database/checkpointer.ts). The batches are what the receiver commits under load: 22 events of
// 1.5 KB each (the average measured behind 50 concurrent webhooks), WAL, synchronous=FULL.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, openWithCheckpointer, type OwnedDatabase } from '../src/database/open.ts';
import { createBatchWriter, type InboxRow } from '../src/inbox/insert-batch.ts';
import { ADAPTER_MIGRATIONS } from '../src/paths.ts';
import { percentile } from './support/load.ts';

const BATCHES = 3_000;
const BATCH = 22;
const BODY = Buffer.alloc(1536, 0x7b);

async function measure(owned: OwnedDatabase) {
  const write = createBatchWriter(owned.db);
  const times: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const rows: InboxRow[] = Array.from({ length: BATCH }, () => ({ eventId: randomUUID(), eventType: 'appointment.created', headers: { 'x-service-event-type': 'appointment.created' }, body: BODY, receivedAt: 0 }));
    const t0 = performance.now();
    write(rows);
    times.push(performance.now() - t0);
    // The event loop turns between commits, as it does between the receiver's batches.
    if (b % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  await owned.close();
  times.sort((a, b) => a - b);
  const total = times.reduce((s, t) => s + t, 0);
  return { p50: percentile(times, 50), p99: percentile(times, 99), p999: percentile(times, 99.9), max: times[times.length - 1]!, total };
}

export async function benchInboxCommit(): Promise<{ rows: Record<string, string | number>[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-commit-'));
  try {
    const inlineDb = openDatabase({ path: join(dir, 'inline.db'), migrationsDir: ADAPTER_MIGRATIONS });
    const inline = await measure({ db: inlineDb, close: async () => void inlineDb.close() });
    const background = await measure(openWithCheckpointer({ path: join(dir, 'background.db'), migrationsDir: ADAPTER_MIGRATIONS }));
    const row = (name: string, r: Awaited<ReturnType<typeof measure>>) => ({
      checkpoints: name,
      'p50 ms': r.p50.toFixed(2),
      'p99 ms': r.p99.toFixed(2),
      'p99.9 ms': r.p999.toFixed(2),
      'max ms': r.max.toFixed(1),
      'event loop held, s': (r.total / 1000).toFixed(2),
    });
    return {
      rows: [
        row('inside commits (SQLite default, baseline)', inline),
        row('background thread (the adapter)', background),
        { checkpoints: 'ratio background/inline', 'p50 ms': (background.p50 / inline.p50).toFixed(2), 'p99 ms': (background.p99 / inline.p99).toFixed(2), 'p99.9 ms': (background.p999 / inline.p999).toFixed(2), 'max ms': (background.max / inline.max).toFixed(2), 'event loop held, s': (background.total / inline.total).toFixed(2) },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
