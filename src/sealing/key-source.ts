// Where the data key file comes from, read once at start: a file (DATA_KEYS_PATH, refused unless mode 0600
// or stricter), a command's standard output (DATA_KEYS_COMMAND: a KMS or vault fetch, run with /bin/sh -c),
// or, with no key set outside production, a file generated once under DATA_DIR. Also writes key files (mode
// 0600, whole or not at all). Messages name the setting, the path, the mode or the command's exit; never
// key material, never what the command printed.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Clock, systemClock } from '../clock.ts';
import { DataKeysError } from './errors.ts';
import { type DataKeyFile, formatKeyFile, generateKeyFile, parseKeyFile } from './keys.ts';
import { type DataKeySource, GENERATED_KEY_FILE } from './settings.ts';

const REASONS: Record<string, string> = { ENOENT: 'no such file', ENOTDIR: 'no such file', EISDIR: 'is a directory', EACCES: 'permission denied' };
const reason = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? (REASONS[code] ?? `unreadable (${code})`) : 'unreadable';
};

/** Reads and checks the key file at `path`, refusing one that its group or others may read or write. */
export function readKeyFileAt(path: string, setting = 'DATA_KEYS_PATH'): DataKeyFile {
  const source = `${setting} (${path})`;
  let mode: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw Object.assign(new Error(), { code: stat.isDirectory() ? 'EISDIR' : 'ENOTFILE' });
    mode = stat.mode & 0o777;
  } catch (err) {
    throw new DataKeysError(`${source}: ${reason(err)}`);
  }
  if (mode & 0o077)
    throw new DataKeysError(
      `${source}: has mode 0${mode.toString(8)}; a data key file must be 0600 or stricter, readable by its owner only (chmod 600 ${path})`,
    );
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new DataKeysError(`${source}: ${reason(err)}`);
  }
  return parseKeyFile(text, source);
}

export interface KeyCommandOptions {
  /** How long the command may run (default 30 s). */
  timeoutMs?: number;
}

/** Most a key command may print: a key file is a few hundred bytes a key. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * Runs DATA_KEYS_COMMAND with /bin/sh -c and returns its standard output. Its standard error passes through
 * to emr-bridge's (what a vault client says when it fails). A non-zero exit, a signal, a timeout or too much
 * output is a DataKeysError saying which, never quoting the output.
 */
export function runKeyCommand(command: string, { timeoutMs = 30_000 }: KeyCommandOptions = {}): Promise<string> {
  const fail = (why: string) => new DataKeysError(`DATA_KEYS_COMMAND: ${why}; its output is not shown (run it by hand to see what it prints)`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    const chunks: Buffer[] = [];
    let size = 0;
    let failure: DataKeysError | undefined;
    const stop = (err: DataKeysError) => {
      failure ??= err;
      // The whole process group: a pipeline's other commands too.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {}
      }
    };
    const timer = setTimeout(() => stop(fail(`did not finish within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) stop(fail(`printed more than ${MAX_OUTPUT_BYTES} bytes`));
      else chunks.push(chunk);
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(fail(`could not be started (${(err as { code?: string }).code ?? 'error'})`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (signal) reject(fail(`was ended by ${signal}`));
      else if (code !== 0) reject(fail(`exited with status ${code}`));
      else resolvePromise(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** Runs DATA_KEYS_COMMAND and checks what it printed as a key file. */
export async function readKeyFileFromCommand(command: string, options?: KeyCommandOptions): Promise<DataKeyFile> {
  return parseKeyFile(await runKeyCommand(command, options), "DATA_KEYS_COMMAND's output");
}

/**
 * Writes a key file readable by its owner only (0600), creating its folder: all of it or nothing (a temporary
 * file, synced, then moved into place). Refuses an existing file (EEXIST) unless `overwrite`.
 */
export function writeKeyFile(path: string, file: DataKeyFile, { overwrite = false }: { overwrite?: boolean } = {}): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, formatKeyFile(file));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    chmodSync(temporary, 0o600);
    if (overwrite) renameSync(temporary, path);
    else linkSync(temporary, path); // fails with EEXIST rather than replace a key file
  } catch (err) {
    unlinkSync(temporary);
    throw err;
  }
  if (!overwrite) unlinkSync(temporary);
}

/**
 * Zero-configuration mode: the key file under `dataDir`, made the first time (one new key, mode 0600) and
 * kept from then on. Returns its path.
 */
export function zeroConfigKeyFile(dataDir: string, clock: Clock = systemClock): string {
  const path = join(dataDir, GENERATED_KEY_FILE);
  try {
    writeKeyFile(path, generateKeyFile(clock));
  } catch (err) {
    // Made by an earlier start (or a concurrent one): that file stands, never replaced.
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
  }
  return path;
}

/** The key file of a configured source, read and checked; undefined for none. */
export async function readDataKeyFile(source: DataKeySource, options: KeyCommandOptions & { clock?: Clock } = {}): Promise<DataKeyFile | undefined> {
  switch (source.kind) {
    case 'path':
      return readKeyFileAt(source.path);
    case 'command':
      return readKeyFileFromCommand(source.command, options);
    case 'generated':
      return readKeyFileAt(zeroConfigKeyFile(dirname(source.path), options.clock), 'the generated data key file');
    case 'none':
      return undefined;
  }
}
