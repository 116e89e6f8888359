// @ts-check
// The WAL checkpoint thread (started by ./checkpoint.ts, which explains why). Plain JavaScript on purpose: a
// worker thread does not inherit the tsx loader the process runs TypeScript with (Node 20), so this file loads
// the same way under `npm start`, the benchmarks and vitest, in about 50 ms and with no loader of its own.
//
// Its own connection to the database file; it only ever runs PASSIVE checkpoints under load, which take no lock
// the adapter's writer waits for. Every `intervalMs` it copies what is new; when that found new frames it looks
// again after `catchUpMs` (up to `catchUpTries` times; past half the bound, until it succeeds), so that one
// checkpoint ends in a gap between two commits with every frame copied: the next commit then starts the WAL
// over from its beginning. If at the pace of the last looks the WAL would pass `maxWalBytes` by the next one, it
// pauses and asks the parent for a RESTART on the writer's own connection, which copies the last commit or two
// and makes the next commit start the WAL over (it cannot be starved by the writer, being the writer). After
// `idleMs` with nothing committed and all of it copied, a TRUNCATE empties the file (no writer to hold up then).
// Errors go to the parent (the code only) and the loop goes on.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** @typedef {{ busy: number; log: number; checkpointed: number }} CheckpointResult */
/**
 * @type {{ path: string; intervalMs: number; catchUpMs: number; catchUpTries: number; idleMs: number;
 *   maxWalBytes: number; busyTimeoutMs: number }}
 */
const opts = workerData;
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

const db = new Database(opts.path, { fileMustExist: true });
// Only the idle TRUNCATE waits on a lock (the writer's, should it start meanwhile), and not for long.
db.pragma(`busy_timeout = ${opts.busyTimeoutMs}`);
db.pragma('synchronous = FULL');
const frameBytes = Number(db.pragma('page_size', { simple: true })) + 24;
const maxWalFrames = Math.max(1, Math.floor(opts.maxWalBytes / frameBytes));

const stats = {
  passive: 0,
  /** Times the WAL was found started over by a commit after a PASSIVE had copied all of it. */
  restartedByCommit: 0,
  /** RESTARTs asked of the writer's connection, the WAL about to pass maxWalBytes. */
  restartsAsked: 0,
  truncated: 0,
  busy: 0,
  /** The most frames the WAL held at one look. */
  maxLogFrames: 0,
  maxWalFrames,
  frameBytes,
  errors: 0,
};
/** @type {Map<string, number>} code -> when it was last reported (one report a minute per code) */
const reported = new Map();
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
let lastLog = -1;
let catchUps = 0;
let lastLookAt = performance.now();
let lastChange = performance.now();
let waitingForParent = false;

/** @param {'PASSIVE' | 'TRUNCATE'} mode @returns {CheckpointResult} */
function checkpoint(mode) {
  const rows = /** @type {CheckpointResult[]} */ (db.pragma(`wal_checkpoint(${mode})`));
  return /** @type {CheckpointResult} */ (rows[0]);
}

/** @param {string} op @param {unknown} err */
function report(op, err) {
  stats.errors++;
  const e = /** @type {{ code?: unknown; name?: unknown }} */ (err ?? {});
  const code = typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : 'unknown';
  const now = Date.now();
  if (now - (reported.get(code) ?? Number.NEGATIVE_INFINITY) < 60_000) return;
  reported.set(code, now);
  port.postMessage({ type: 'error', op, code });
}

/** @param {number} ms */
function schedule(ms) {
  clearTimeout(timer);
  timer = setTimeout(tick, ms);
}

function tick() {
  let delay = opts.intervalMs;
  let op = 'PASSIVE';
  try {
    const startedAt = performance.now();
    const r = checkpoint('PASSIVE');
    stats.passive++;
    if (r.log > stats.maxLogFrames) stats.maxLogFrames = r.log;
    if (r.log < lastLog && r.log > 0) stats.restartedByCommit++;
    // `log` is the WAL as this checkpoint found it; whatever was committed while it ran is for the next look.
    const moved = r.log !== lastLog;
    const framesPerMs = lastLog >= 0 && r.log > lastLog ? (r.log - lastLog) / Math.max(1, startedAt - lastLookAt) : 0;
    lastLog = r.log;
    lastLookAt = startedAt;
    if (moved) {
      lastChange = startedAt;
      if (catchUps < opts.catchUpTries || r.log >= maxWalFrames / 2) {
        // Look again soon, for a moment between two commits with every frame copied (the next commit then
        // starts the WAL over); past half the bound, until that happens, rather than ask for a RESTART.
        catchUps++;
        delay = opts.catchUpMs;
      } else {
        catchUps = 0;
      }
    } else {
      catchUps = 0;
    }
    const now = performance.now();
    if (r.log + framesPerMs * (now - startedAt + delay) >= maxWalFrames) {
      // By the next look the WAL would be past its bound at this pace: pause, and ask the parent for a RESTART
      // (it answers once done; a second at most, then looks again), so that it finds the checkpoint lock free.
      stats.restartsAsked++;
      waitingForParent = true;
      port.postMessage({ type: 'restart' });
      delay = 1000;
    } else if (!moved && r.log > 0 && r.checkpointed >= r.log && now - lastChange >= opts.idleMs) {
      // Idle: empty the file. No writer to hold up now (one that starts meanwhile waits busyTimeoutMs at most).
      op = 'TRUNCATE';
      if (checkpoint('TRUNCATE').busy) stats.busy++;
      else stats.truncated++;
      lastLog = -1;
    }
  } catch (err) {
    report(op, err);
  }
  schedule(delay);
}

port.on('message', (msg) => {
  if (msg === 'stats') {
    port.postMessage({ type: 'stats', stats });
  } else if (msg === 'restarted') {
    if (!waitingForParent) return;
    waitingForParent = false;
    // The next commit starts the WAL over: frames are counted from now.
    lastLog = 0;
    lastLookAt = performance.now();
    catchUps = 0;
    schedule(opts.intervalMs);
  } else if (msg === 'stop') {
    clearTimeout(timer);
    try {
      // The last connection to close folds the WAL into the database and removes the file.
      db.close();
    } catch (err) {
      report('close', err);
    }
    process.exit(0);
  }
});

schedule(opts.intervalMs);
