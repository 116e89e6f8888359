// WAL checkpoints on a thread of their own. By default SQLite checkpoints inside the commit that pushes the
// WAL past 1000 pages: that commit copies pages into the main file and fsyncs it, with the event loop
// stopped, and every webhook waiting on it pays 15-30 ms (the receiver's p99 on this machine). Here the
// adapter's connection never checkpoints (wal_autocheckpoint=0), and a worker with its own connection
// runs PASSIVE checkpoints, which never block the writer or readers, on a timer. Nothing but a stop
// message crosses between the threads.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface Checkpointer {
  /** Runs one last checkpoint (the WAL is folded into the main file and truncated) and ends the thread. */
  stop(): Promise<void>;
}

// Plain CommonJS, run with `eval`: a worker does not inherit the TypeScript loader the process runs under.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
const checkpoint = (mode) => { try { db.pragma('wal_checkpoint(' + mode + ')'); } catch {} };
const timer = setInterval(() => checkpoint('PASSIVE'), workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint('TRUNCATE');
  db.close();
  parentPort.close();
});
`;

export function startCheckpointer(opts: { path: string; everyMs?: number; onError?: (err: Error) => void }): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { path: opts.path, driver, everyMs: opts.everyMs ?? 500 } });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // A checkpointer that dies loses nothing (the WAL only grows); onError lets the owner take checkpoints back.
  worker.on('error', (err) => opts.onError?.(err));
  return {
    async stop() {
      worker.postMessage('stop');
      await exited;
    },
  };
}
