// The inbox's writer thread: owns one connection and commits what the main thread sends, so the fsync of
// synchronous=FULL never blocks the event loop that serves webhooks. The main thread sends a batch per
// event-loop turn; batches that arrive while a commit is in progress are merged into the next one.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createBatchWriter, type InboxRow } from './insert-batch.ts';

export interface WriterBatch {
  id: number;
  rows: InboxRow[];
}
export type WriterReply = { id: number; duplicates: boolean[] } | { id: number; error: string };

const { path, busyTimeoutMs } = workerData as { path: string; busyTimeoutMs: number };
const db = new Database(path);
db.pragma(`busy_timeout = ${busyTimeoutMs}`);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
const write = createBatchWriter(db);

let pending: WriterBatch[] = [];
let scheduled = false;

function commit(): void {
  scheduled = false;
  const batches = pending;
  pending = [];
  try {
    const duplicates = write(batches.flatMap((b) => b.rows));
    let at = 0;
    for (const b of batches) {
      parentPort!.postMessage({ id: b.id, duplicates: duplicates.slice(at, at + b.rows.length) } satisfies WriterReply);
      at += b.rows.length;
    }
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'SQLITE_ERROR';
    for (const b of batches) parentPort!.postMessage({ id: b.id, error: code } satisfies WriterReply);
  }
}

parentPort!.on('message', (msg: WriterBatch | 'close') => {
  if (msg === 'close') {
    if (pending.length) commit();
    db.close();
    // Ends this thread only (the main thread waits for its 'exit').
    process.exit(0);
  }
  pending.push(msg);
  if (!scheduled) {
    scheduled = true;
    setImmediate(commit);
  }
});
