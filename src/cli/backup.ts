// `emr-bridge backup [--out FILE]`: a consistent copy of the adapter's SQLite database, taken with SQLite's
// online backup API. It reads through a read-only connection: the one-process-per-database lock is on
// `<db>.lock`, not on the database, so this is safe while `serve` runs, and it needs no `sqlite3` program
// (the container image has none). With DATABASE_URL set it refuses, pointing to pg_dump.
import { constants, copyFileSync, existsSync, linkSync, mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { UsageError, parse } from './args.ts';
import { keyIdsInUse } from '../storage/sealed-values.ts';
import { openSqliteSealedValues } from '../storage/sqlite/sealed-values.ts';
import { describeKeyUse } from './data-keys-rotate.ts';
import { print } from './output.ts';
import { SPECS, usageOf } from './specs.ts';

/** What `emr-bridge backup --help` prints (the options, their meaning and defaults: ./specs.ts). */
export const BACKUP_USAGE = usageOf(SPECS.backup);

/** 20261123T101500Z: sortable, and free of the colons some file systems refuse. */
const utcStamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

// All remaining pages in one step: one read transaction sees one snapshot. Smaller steps would restart the
// copy whenever `serve` commits between them, which under steady webhook traffic could be forever. In WAL
// mode the reader does not hold up the writer, so `serve` keeps acknowledging webhooks meanwhile.
const ALL_PAGES = 0x7fffffff;

/** With DATABASE_URL the state is in PostgreSQL: its own tools back it up (docs/replicas.md, "Backups"). */
export const POSTGRES_REFUSAL =
  'DATABASE_URL is set: the state is in PostgreSQL, and this command copies only the SQLite file. Back PostgreSQL up with its own tools: ' +
  'pg_dump for a logical backup (pg_dump --format=custom --file=emr-bridge.dump "$DATABASE_URL"), or base backups with WAL archiving for ' +
  'point-in-time recovery. Nothing backed up';

const refuse = (code: number, message: string): number => {
  process.stderr.write(`emr-bridge backup: ${message}\n`);
  return code;
};

export async function backupCommand(argv: string[]): Promise<number> {
  // -h/--help: parse throws HelpRequested, and the CLI prints BACKUP_USAGE with exit 0.
  const { values, positionals } = parse(argv, SPECS.backup);
  if (positionals.length) throw new UsageError(`takes no arguments, got ${positionals.join(' ')}`);
  if (values.out === '') throw new UsageError('--out must not be empty');
  const config = loadConfig({}, 'tools');
  if (config.databaseUrl) return refuse(1, POSTGRES_REFUSAL);
  const source = config.databasePath;
  if (!existsSync(source)) return refuse(1, `no database at ${source} (set DATA_DIR or DATABASE_PATH to the adapter's): nothing backed up`);
  const out = resolve(values.out ?? join(config.dataDir, 'backups', `emr-bridge-${utcStamp(systemClock.now())}.db`));
  if (existsSync(out)) return refuse(2, `${out} exists; not overwritten (choose another --out)`);
  mkdirSync(dirname(out), { recursive: true });

  // Written under a temporary name beside the target, then put in place by an exclusive link: a failed
  // copy never leaves a half-written file under the name, and a file that appeared meanwhile is kept.
  const partial = join(dirname(out), `.${basename(out)}.${process.pid}.partial`);
  try {
    const db = new Database(source, { readonly: true, fileMustExist: true });
    try {
      await db.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      db.close();
    }
    if (!placeExclusively(partial, out)) return refuse(2, `${out} exists; not overwritten (choose another --out)`);
  } finally {
    rmSync(partial, { force: true });
  }
  await sayKeysNeeded(out);
  print(out);
  return 0;
}

/**
 * The copy holds patient data sealed (docs/data-at-rest.md), never the keys: which key ids a restore needs, read
 * from the copy's own values, so that whoever keeps the backup knows which keys to keep too.
 */
async function sayKeysNeeded(copy: string): Promise<void> {
  const values = openSqliteSealedValues(copy, { readonly: true });
  try {
    const use = await keyIdsInUse(values);
    const kids = [...use.keys()].filter((kid) => kid !== 'clear' && kid !== 'damaged');
    process.stderr.write(
      kids.length
        ? `the backup's patient data is sealed under data key${kids.length > 1 ? 's' : ''} ${kids.join(', ')}: a restore needs ${kids.length > 1 ? 'them' : 'it'} in the key file (never in the backup; keep them apart). Stored values: ${describeKeyUse(use)}\n`
        : `the backup holds no sealed values (${describeKeyUse(use)})\n`,
    );
  } finally {
    await values.close();
  }
}

/** Puts `from` at `to` unless `to` exists (false then). */
function placeExclusively(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EEXIST') return false;
    // Some volumes (network shares, some container storage drivers) have no hard links: copy instead,
    // still exclusively.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw err;
  }
  try {
    copyFileSync(from, to, constants.COPYFILE_EXCL);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'EEXIST') return false;
    throw err;
  }
}
