// Sealing and opening one stored value. A sealed value is a JWE (RFC 7516: `dir`, AES-256-GCM, a random
// 96-bit IV per value) whose protected header carries the key id and `ctx`, the identity of the row it is
// written to (`inbox_events/body/<eventId>`: table, column, key; identifiers only). JWE authenticates the
// protected header as the cipher's associated data, so a value copied into another row opens only to be
// refused as misplaced, and an altered one does not open at all. Text is sealed to the compact JWE; bytes to
// the packed form of the same parts, about a quarter smaller (./format.ts has both forms, the prefix that tells a
// sealed value from a clear one, keyIdOf and compactOf). With DATA_ENCRYPTION=off, createClearSealer writes in
// clear through the same interface and still opens sealed values when it has their keys.
//
// The cipher is node:crypto's AES-256-GCM (OpenSSL), called synchronously: jose 6 writes and reads the same
// values (tests check both ways), but on Node.js 24 it goes through WebCrypto, about 120 µs of main-thread CPU
// per value against 10 to 20 here, which took the receiver to 0.57 and the processor to 0.63 of their speed without
// sealing (docs/decisions.md, "Sealed values: the JWE format, node:crypto's AEAD").
import { createCipheriv, createDecipheriv, type KeyObject, randomFillSync } from 'node:crypto';
import { DataKeyMissingError, SealedValueInvalidError, SealedValueMisplacedError } from './errors.ts';
import { asBuffer, type CipherParts, compact, IV_BYTES, packed, SEALED_PREFIX, type SealedParts, sealedParts, TAG_BYTES } from './format.ts';
import type { DataKeySet } from './keys.ts';

/** Synchronous: a value is sealed or opened in the step that writes or reads it (inside a better-sqlite3 transaction too). */
export interface Sealer {
  /** Whether new values are sealed (DATA_ENCRYPTION=on) or written in clear. */
  readonly sealing: boolean;
  /** The kid new values are sealed under; undefined when writing in clear. */
  readonly currentKid: string | undefined;
  /** Every kid it opens values of, the current one first; none without keys. */
  readonly keyIds: readonly string[];
  /** A text value for a text column: the sealed value, or (in clear) the text itself. */
  seal(plain: string, context: string): string;
  /** A bytes value for a bytes column: the sealed value packed, or (in clear) the bytes themselves. */
  sealBytes(plain: Uint8Array, context: string): Buffer;
  /**
   * The plain bytes of a stored value read for `context` (as text or bytes, whichever its column gives). A
   * clear value comes back as it is; a sealed one opens, or throws DataKeyMissingError (its key is not
   * configured), SealedValueInvalidError (truncated, malformed, altered) or SealedValueMisplacedError (sealed
   * for another row).
   */
  open(stored: string | Uint8Array, context: string): Buffer;
  /** open, as UTF-8 text. */
  openText(stored: string | Uint8Array, context: string): string;
}

/**
 * Fresh random IVs, drawn from the system's CSPRNG a few hundred at a time (one call per value cost more than
 * the cipher); each handed out once, copied, never reused.
 */
function createIvSource(): () => Buffer {
  const pool = Buffer.alloc(IV_BYTES * 512);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    next += IV_BYTES;
    return Buffer.from(pool.subarray(next - IV_BYTES, next));
  };
}

/** The parts of `plain` sealed under `key`: `headerStart` is the protected header up to the context's value. */
function encrypt(plain: Uint8Array, key: KeyObject, headerStart: string, context: string, iv: Buffer): CipherParts {
  const header = Buffer.from(`${headerStart}${JSON.stringify(context)}}`).toString('base64url');
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  // JWE's associated data: the ASCII of the encoded protected header.
  cipher.setAAD(Buffer.from(header, 'latin1'));
  const first = cipher.update(plain);
  const rest = cipher.final();
  return { header, iv, ciphertext: rest.length ? Buffer.concat([first, rest]) : first, tag: cipher.getAuthTag() };
}

/** The plaintext of a sealed value whose shape sealedParts checked; throws when authentication fails. */
function decrypt({ header, iv, ciphertext, tag }: SealedParts, key: KeyObject): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(header, 'latin1'));
  decipher.setAuthTag(tag);
  const first = decipher.update(ciphertext);
  const rest = decipher.final();
  return rest.length ? Buffer.concat([first, rest]) : first;
}

/** Contexts are identifiers: printable, no control characters, at most 512 characters. */
function checkContext(context: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the check refuses.
  if (context.length === 0 || context.length > 512 || /[\u0000-\u001f\u007f]/.test(context))
    throw new TypeError('a sealing context is 1 to 512 printable characters (table/column/key)');
}

const asBytes = (stored: string | Uint8Array): Buffer => (typeof stored === 'string' ? Buffer.from(stored, 'utf8') : asBuffer(stored));

/** Opens a sealed value with `keys`: the checks in the order that names the right fault. */
function openSealed(parts: SealedParts, context: string, keys: DataKeySet | undefined): Buffer {
  const { kid, ctx } = parts;
  const key = keys?.get(kid);
  if (!key) throw new DataKeyMissingError(kid, context);
  let plain: Buffer;
  try {
    plain = decrypt(parts, key.key);
  } catch {
    throw new SealedValueInvalidError('altered', context);
  }
  // Authentic from here: the header was the associated data.
  if (ctx !== context) throw new SealedValueMisplacedError(context, ctx);
  return plain;
}

/** open for either sealer: a clear value as it is, a sealed one (either form) opened with `keys`. */
function openerWith(keys: DataKeySet | undefined): Sealer['open'] {
  return (stored, context) => {
    checkContext(context);
    const parts = sealedParts(stored, context);
    return parts === undefined ? asBytes(stored) : openSealed(parts, context, keys);
  };
}

/** A sealer that seals every new value under `keys.current` and opens values sealed under any of `keys`. */
export function createSealer(keys: DataKeySet): Sealer {
  const { current } = keys;
  const nextIv = createIvSource();
  // The protected header `{alg, enc, kid, ctx}` in that order, up to the context's value: the same for every value.
  const headerStart = `{"alg":"dir","enc":"A256GCM","kid":${JSON.stringify(current.kid)},"ctx":`;
  const partsOf = (plain: Uint8Array, context: string) => {
    checkContext(context);
    const parts = encrypt(plain, current.key, headerStart, context, nextIv());
    // The prefix is what tells sealed from clear: a header written otherwise must not pass for clear.
    if (!parts.header.startsWith(SEALED_PREFIX)) throw new Error('a protected header in an unexpected form');
    return parts;
  };
  const open = openerWith(keys);
  return {
    sealing: true,
    currentKid: current.kid,
    keyIds: keys.kids,
    seal: (plain, context) => compact(partsOf(Buffer.from(plain, 'utf8'), context)),
    sealBytes: (plain, context) => packed(partsOf(plain, context)),
    open,
    openText: (stored, context) => open(stored, context).toString('utf8'),
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
    seal: (plain, context) => {
      checkContext(context);
      return plain;
    },
    sealBytes: (plain, context) => {
      checkContext(context);
      return asBuffer(plain);
    },
    open,
    openText: (stored, context) => open(stored, context).toString('utf8'),
  };
}
