// `emr-bridge data-keys rotate`: every stored value re-sealed under the current data key, online (beside a
// running serve, or replicas on PostgreSQL) and resumable (run it again after a kill: what is done is skipped),
// with a progress bar on standard error; at the end, which key ids are still in use, and which keys of the key
// file no longer seal anything (they may leave the file once no backup that needs them is kept). The mechanism
// is src/storage/sealed-values.ts; this file is its command line.
import { type Clock, systemClock } from '../clock.ts';
import { existsSync } from 'node:fs';
import { loadConfig } from '../config.ts';
import { loadSealer } from '../sealing/load.ts';
import { openPostgresSealedValues } from '../storage/postgres/sealed-values.ts';
import { keyIdsInUse, type KeyUse, type RotationProgress, rotateSealedValues, type SealedValueStore } from '../storage/sealed-values.ts';
import { openSqliteSealedValues } from '../storage/sqlite/sealed-values.ts';
import { print } from './output.ts';

const note = (line: string) => process.stderr.write(`${line}\n`);

/** The configured store's sealed columns (the SQLite file, or PostgreSQL with DATABASE_URL). */
export function openConfiguredSealedValues(config: { databaseUrl?: string; databasePath: string }, opts: { readonly?: boolean } = {}): SealedValueStore {
  if (config.databaseUrl) return openPostgresSealedValues(config.databaseUrl);
  if (!existsSync(config.databasePath)) throw new Error(`no database at ${config.databasePath} (set DATA_DIR or DATABASE_PATH to the adapter's)`);
  return openSqliteSealedValues(config.databasePath, opts);
}

/** `[#########...........]  45%  inbox_events.body 4,500 of 10,000 (re-sealed 4,100)`, redrawn in place on a terminal. */
function progressBar(clock: Clock): { update(p: RotationProgress): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  let lastLine = '';
  let lastAt = 0;
  return {
    update(p) {
      const share = p.total ? p.seen / p.total : 1;
      const filled = Math.round(share * 30);
      const line = `[${'#'.repeat(filled)}${'.'.repeat(30 - filled)}] ${String(Math.round(share * 100)).padStart(3)}%  ${p.column.table}.${p.column.column} ${p.seen.toLocaleString('en')} of ${p.total.toLocaleString('en')} (re-sealed ${p.resealed.toLocaleString('en')})`;
      if (tty) process.stderr.write(`\r${line}`);
      else if (clock.now() - lastAt > 2000 || p.seen === p.total) {
        note(line);
        lastAt = clock.now();
      }
      lastLine = line;
    },
    done() {
      if (tty && lastLine) process.stderr.write('\n');
    },
  };
}

/** What a copy of the data needs to be read: every key id a stored value is sealed under. */
export function describeKeyUse(use: KeyUse): string {
  const sealed = [...use].filter(([kid]) => kid !== 'clear' && kid !== 'damaged');
  const parts = sealed.map(([kid, n]) => `${kid} (${n.toLocaleString('en')} values)`);
  if (use.get('clear')) parts.push(`${use.get('clear')!.toLocaleString('en')} values in clear`);
  if (use.get('damaged')) parts.push(`${use.get('damaged')!.toLocaleString('en')} values whose header does not read`);
  return parts.length ? parts.join(', ') : 'no stored values';
}

/** `data-keys in-use`: the key ids the stored values need (what a pg_dump or a copy of the file needs to be read). */
export async function reportKeysInUse(): Promise<number> {
  const config = loadConfig({}, 'tools');
  const store = openConfiguredSealedValues(config, { readonly: true });
  try {
    const use = await keyIdsInUse(store);
    note(`stored values: ${describeKeyUse(use)}`);
    print([...use.keys()].filter((kid) => kid !== 'clear' && kid !== 'damaged').join(' '));
    return 0;
  } finally {
    await store.close();
  }
}

export async function rotateDataKeys(pageSize?: number): Promise<number> {
  const config = loadConfig({}, 'tools');
  if (config.dataKeys.encryption === 'off') {
    note('emr-bridge data-keys rotate: DATA_ENCRYPTION=off: there is no current key to re-seal under; nothing done');
    return 1;
  }
  const sealer = await loadSealer(config.dataKeys);
  const store = openConfiguredSealedValues(config);
  try {
    note(`re-sealing every stored value under the current key ${sealer.currentKid}`);
    const bar = progressBar(systemClock);
    const result = await rotateSealedValues(store, sealer, { ...(pageSize ? { pageSize } : {}), onProgress: (p) => bar.update(p) });
    bar.done();
    note(
      `${result.resealed.toLocaleString('en')} values re-sealed${result.changedMeanwhile ? `; ${result.changedMeanwhile} changed by the adapter meanwhile (written by it under the current key)` : ''}`,
    );
    const use = await keyIdsInUse(store);
    note(`key ids in use now: ${describeKeyUse(use)}`);
    const unused = sealer.keyIds.filter((kid) => kid !== sealer.currentKid && !use.has(kid));
    for (const kid of unused)
      note(`key ${kid} is no longer used by any stored value: it may leave the key file once no backup made while it was in use is kept`);
    print([...use.keys()].filter((kid) => kid !== 'clear' && kid !== 'damaged').join(' '));
    return 0;
  } finally {
    await store.close();
  }
}
