// The sealed columns (./sealed-contexts.ts) read and rewritten as a whole, engine-neutral: `data-keys rotate`
// re-seals every stored value under the current key, and `backup` and rotate say which key ids a copy of the
// data needs. ./sqlite/sealed-values.ts and ./postgres/sealed-values.ts page through a column by its key.
//
// Rotation is online and resumable: it reads a page of value heads (enough to see the key id), opens and
// re-seals only the values not under the current key, and writes each page's in one transaction, each row
// only where it still holds the value read (a row the adapter changed or pruned meanwhile is left as it is:
// whatever it holds now was written by the adapter, under the current key). Killed at any point, it starts over
// from the first row and skips, by their heads, the values already re-sealed.
import { SEALED_PREFIX } from '../sealing/format.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { SEALED_COLUMNS, type SealedColumn, sealContext } from './sealed-contexts.ts';

/** A value's first characters: its key id is in there (its protected header). */
export const HEAD_CHARS = 1024;

export interface ValueHead {
  key: string;
  /** The stored value's first HEAD_CHARS characters (bytes, for a bytes column). */
  head: string;
}

export interface Replacement {
  key: string;
  previous: string | Buffer;
  next: string | Buffer;
}

export interface SealedValueStore {
  /** The rows of `column` holding a value, in key order, after `afterKey` (exclusive), at most `limit`. */
  heads(column: SealedColumn, afterKey: string, limit: number): Promise<ValueHead[]>;
  /** The whole stored value of a row; null when it holds none (pruned meanwhile). */
  value(column: SealedColumn, key: string): Promise<string | Buffer | null>;
  /** Writes each replacement where its row still holds `previous`, in one transaction; says how many were written. */
  replace(column: SealedColumn, replacements: readonly Replacement[]): Promise<number>;
  /** How many rows of `column` hold a value. */
  count(column: SealedColumn): Promise<number>;
  close(): Promise<void>;
}

/** The key id of a stored value from its head; `clear` for a value written in clear. */
export function keyIdOfHead(head: string): string {
  if (!head.startsWith(SEALED_PREFIX)) return 'clear';
  try {
    const header = JSON.parse(Buffer.from(head.split('.')[0]!, 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof header.kid === 'string' ? header.kid : 'damaged';
  } catch {
    return 'damaged';
  }
}

/** Stored values per key id (`clear` for values written in clear, `damaged` for a header that does not read). */
export type KeyUse = Map<string, number>;

export async function keyIdsInUse(store: SealedValueStore, pageSize = 1000): Promise<KeyUse> {
  const use: KeyUse = new Map();
  for (const column of SEALED_COLUMNS)
    for await (const page of pages(store, column, pageSize))
      for (const row of page) {
        const kid = keyIdOfHead(row.head);
        use.set(kid, (use.get(kid) ?? 0) + 1);
      }
  return use;
}

async function* pages(store: SealedValueStore, column: SealedColumn, pageSize: number): AsyncGenerator<ValueHead[]> {
  let after = '';
  for (;;) {
    const page = await store.heads(column, after, pageSize);
    if (!page.length) return;
    yield page;
    after = page[page.length - 1]!.key;
  }
}

/** Values re-sealed per transaction (documents: a tenth of it). */
export const DEFAULT_PAGE_SIZE = 500;

export interface RotationProgress {
  column: SealedColumn;
  /** Rows of the column looked at so far, and in all (as counted at its start). */
  seen: number;
  total: number;
  resealed: number;
}

export interface RotationResult {
  /** Values re-sealed under the current key. */
  resealed: number;
  /** Rows that changed (or were pruned) between the read and the write, left as the adapter wrote them. */
  changedMeanwhile: number;
}

/**
 * Re-seals every stored value not under `sealer`'s current key (values in clear included), a page at a time.
 * Throws the sealing error of a value that does not open (a key missing from the set): nothing of that page
 * is written, and a run with the key back resumes.
 */
export async function rotateSealedValues(
  store: SealedValueStore,
  sealer: Sealer,
  opts: { pageSize?: number; onProgress?: (p: RotationProgress) => void } = {},
): Promise<RotationResult> {
  const current = sealer.currentKid;
  if (!sealer.sealing || current === undefined) throw new Error('rotation needs DATA_ENCRYPTION=on and a current data key');
  const result: RotationResult = { resealed: 0, changedMeanwhile: 0 };
  for (const column of SEALED_COLUMNS) {
    const total = await store.count(column);
    let seen = 0;
    let resealed = 0;
    // A tenth as many rows per page for the column of large values (documents): a page's values are held at once.
    const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    for await (const page of pages(store, column, column.bytes ? pageSize : Math.max(1, Math.floor(pageSize / 10)))) {
      const stale = page.filter((row) => keyIdOfHead(row.head) !== current);
      const replacements: Replacement[] = [];
      for (const row of stale) {
        const r = await resealedValue(store, sealer, column, row.key);
        if (r) replacements.push(r);
      }
      const written = replacements.length ? await store.replace(column, replacements) : 0;
      resealed += written;
      result.changedMeanwhile += stale.length - written;
      seen += page.length;
      opts.onProgress?.({ column, seen, total: Math.max(total, seen), resealed });
    }
    result.resealed += resealed;
  }
  return result;
}

/** One row's value opened and sealed again under the current key; undefined when the row holds none now. */
async function resealedValue(store: SealedValueStore, sealer: Sealer, column: SealedColumn, key: string): Promise<Replacement | undefined> {
  const previous = await store.value(column, key);
  if (previous === null) return undefined;
  const context = sealContext(column, key);
  const plain = sealer.open(previous, context);
  const next = column.bytes ? sealer.sealBytes(plain, context) : sealer.seal(plain.toString('utf8'), context);
  return { key, previous, next };
}
