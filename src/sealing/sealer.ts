// Sealing and opening one stored value. A sealed value is a compact JWE made by jose (`dir`, AES-256-GCM, a
// random 96-bit IV per value) whose protected header carries the key id and `ctx`, the identity of the row it
// is written to (`inbox_events/body/<eventId>`: table, column, key; identifiers only). JWE authenticates the
// protected header as the cipher's associated data, so a value copied into another row opens only to be
// refused as misplaced, and an altered one does not open at all. ./format.ts has the form, the prefix that
// tells a sealed value from a clear one, and keyIdOf. With DATA_ENCRYPTION=off, createClearSealer writes in
// clear through the same interface and still opens sealed values when it has their keys.
import { CompactEncrypt, compactDecrypt } from 'jose';
import { DataKeyMissingError, SealedValueInvalidError, SealedValueMisplacedError } from './errors.ts';
import { headerOf, SEALED_PREFIX, sealedText } from './format.ts';
import type { DataKeySet } from './keys.ts';

export interface Sealer {
  /** Whether new values are sealed (DATA_ENCRYPTION=on) or written in clear. */
  readonly sealing: boolean;
  /** The kid new values are sealed under; undefined when writing in clear. */
  readonly currentKid: string | undefined;
  /** Every kid it opens values of, the current one first; none without keys. */
  readonly keyIds: readonly string[];
  /** A text value for a text column: the sealed value, or (in clear) the text itself. */
  seal(plain: string, context: string): Promise<string>;
  /** A bytes value for a bytes column: the sealed value's ASCII bytes, or (in clear) the bytes themselves. */
  sealBytes(plain: Uint8Array, context: string): Promise<Buffer>;
  /**
   * The plain bytes of a stored value read for `context` (as text or bytes, whichever its column gives). A
   * clear value comes back as it is; a sealed one opens, or throws DataKeyMissingError (its key is not
   * configured), SealedValueInvalidError (truncated, malformed, altered) or SealedValueMisplacedError (sealed
   * for another row).
   */
  open(stored: string | Uint8Array, context: string): Promise<Buffer>;
  /** open, as UTF-8 text. */
  openText(stored: string | Uint8Array, context: string): Promise<string>;
}

const DECRYPT_OPTIONS = { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] };

/** Contexts are identifiers: printable, no control characters, at most 512 characters. */
function checkContext(context: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the check refuses.
  if (context.length === 0 || context.length > 512 || /[\u0000-\u001f\u007f]/.test(context))
    throw new TypeError('a sealing context is 1 to 512 printable characters (table/column/key)');
}

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const asBytes = (stored: string | Uint8Array): Buffer => (typeof stored === 'string' ? Buffer.from(stored, 'utf8') : asBuffer(stored));

/** Opens a sealed value with `keys`: the checks in the order that names the right fault. */
async function openSealed(sealed: string, context: string, keys: DataKeySet | undefined): Promise<Buffer> {
  const { kid } = headerOf(sealed, context);
  const key = keys?.get(kid);
  if (!key) throw new DataKeyMissingError(kid, context);
  let result: Awaited<ReturnType<typeof compactDecrypt>>;
  try {
    result = await compactDecrypt(sealed, key.key, DECRYPT_OPTIONS);
  } catch {
    throw new SealedValueInvalidError('altered', context);
  }
  // Authentic from here: the header was the associated data.
  const found = result.protectedHeader.ctx;
  if (found !== context) throw new SealedValueMisplacedError(context, String(found));
  return asBuffer(result.plaintext);
}

/** open for either sealer: a clear value as it is, a sealed one opened with `keys`. */
function openerWith(keys: DataKeySet | undefined): Sealer['open'] {
  return async (stored, context) => {
    checkContext(context);
    const sealed = sealedText(stored);
    return sealed === undefined ? asBytes(stored) : openSealed(sealed, context, keys);
  };
}

/** A sealer that seals every new value under `keys.current` and opens values sealed under any of `keys`. */
export function createSealer(keys: DataKeySet): Sealer {
  const { current } = keys;
  const sealOf = async (plain: Uint8Array, context: string): Promise<string> => {
    checkContext(context);
    const sealed = await new CompactEncrypt(plain).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: current.kid, ctx: context }).encrypt(current.key);
    // The prefix is what tells sealed from clear: a header jose wrote otherwise must not pass for clear.
    if (!sealed.startsWith(SEALED_PREFIX)) throw new Error('jose wrote a protected header in an unexpected form');
    return sealed;
  };
  const open = openerWith(keys);
  return {
    sealing: true,
    currentKid: current.kid,
    keyIds: keys.kids,
    seal: (plain, context) => sealOf(Buffer.from(plain, 'utf8'), context),
    sealBytes: async (plain, context) => Buffer.from(await sealOf(plain, context), 'latin1'),
    open,
    openText: async (stored, context) => (await open(stored, context)).toString('utf8'),
  };
}

/**
 * DATA_ENCRYPTION=off: new values are written in clear, unchanged. Sealed values (written while it was on)
 * still open with `keys` when given; without them, opening one throws DataKeyMissingError naming its kid.
 */
export function createClearSealer(keys?: DataKeySet): Sealer {
  const open = openerWith(keys);
  return {
    sealing: false,
    currentKid: undefined,
    keyIds: keys?.kids ?? [],
    seal: async (plain, context) => {
      checkContext(context);
      return plain;
    },
    sealBytes: async (plain, context) => {
      checkContext(context);
      return asBuffer(plain);
    },
    open,
    openText: async (stored, context) => (await open(stored, context)).toString('utf8'),
  };
}
