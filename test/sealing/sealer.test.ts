// Sealing one value: it round-trips, never twice the same, opens only in the row it was sealed for, under a
// key the set holds, and whole; an older key still opens after a new current one is put first. The clear
// sealer (DATA_ENCRYPTION=off) writes values as they are and still opens what was sealed while it was on.
import { randomBytes, webcrypto } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { DataKeyMissingError, SealedValueInvalidError, SealedValueMisplacedError } from '../../src/sealing/errors.ts';
import { compactOf, keyIdOf } from '../../src/sealing/format.ts';
import { createClearSealer, createSealer } from '../../src/sealing/sealer.ts';
import { keyMaterialOf, keySetOf } from './builders.ts';

const CTX = 'inbox_events/body/evt-1';
const BODY = '{"eventId":"evt-1","data":{"patient":{"name":"Marker Smith","phone":"+15550100"}}}';
const sealerOf = async (...kids: string[]) => createSealer(await keySetOf(...kids));

/** The error `open` throws. */
function thrown(open: () => unknown): Error {
  try {
    open();
  } catch (err) {
    return err as Error;
  }
  throw new Error('it opened');
}

/** `sealed` with the character at `index` replaced by another base64url character. */
const flipped = (sealed: string, index: number): string => sealed.slice(0, index) + (sealed[index] === 'A' ? 'B' : 'A') + sealed.slice(index + 1);

describe('createSealer', () => {
  it('seals text that opens to the same text, naming no part of it', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = await sealer.seal(BODY, CTX);
    expect(sealed).not.toContain('Marker');
    expect(Buffer.from(sealed, 'latin1').toString('utf8')).toBe(sealed);
    expect(await sealer.openText(sealed, CTX)).toBe(BODY);
    expect(keyIdOf(sealed)).toBe('k-1');
  });

  it('seals bytes that open to the same bytes, read back as text or as bytes', async () => {
    const sealer = await sealerOf('k-1');
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 255, 128, 10])]);
    const sealed = await sealer.sealBytes(pdf, 'outbox_documents/content/doc-1');
    expect((await sealer.open(sealed, 'outbox_documents/content/doc-1')).equals(pdf)).toBe(true);
    expect((await sealer.open(sealed.toString('latin1'), 'outbox_documents/content/doc-1')).equals(pdf)).toBe(true);
  });

  it('seals an empty value', async () => {
    const sealer = await sealerOf('k-1');
    expect(await sealer.openText(await sealer.seal('', CTX), CTX)).toBe('');
  });

  it('seals the same value differently each time (a random IV per value)', async () => {
    const sealer = await sealerOf('k-1');
    const [a, b] = [await sealer.seal(BODY, CTX), await sealer.seal(BODY, CTX)];
    expect(a).not.toBe(b);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  it('refuses a value sealed for one row when it is read for another', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = await sealer.seal(BODY, CTX);
    const err = thrown(() => sealer.open(sealed, 'inbox_events/body/evt-2'));
    expect(err).toBeInstanceOf(SealedValueMisplacedError);
    expect(err).toMatchObject({ code: 'sealed_value_misplaced', expected: 'inbox_events/body/evt-2', found: CTX });
    expect(err.message).toContain('inbox_events/body/evt-2');
    expect(err.message).not.toContain('Marker');
  });

  it('names the kid of a value sealed under a key the set does not hold', async () => {
    const sealed = await (await sealerOf('k-gone')).seal(BODY, CTX);
    const other = await sealerOf('k-1');
    const err = thrown(() => other.open(sealed, CTX));
    expect(err).toBeInstanceOf(DataKeyMissingError);
    expect(err).toMatchObject({ code: 'data_key_missing', kid: 'k-gone' });
    expect(err.message).toContain('data key k-gone');
    expect(err.message).toContain(CTX);
  });

  it('refuses a truncated value as invalid, wherever it is cut', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = await sealer.seal(BODY, CTX);
    for (const length of [sealed.length - 1, sealed.length - 23, sealed.lastIndexOf('.'), 60, 20]) {
      const err = thrown(() => sealer.open(sealed.slice(0, length), CTX));
      expect(err, `cut at ${length}`).toBeInstanceOf(SealedValueInvalidError);
      expect(err).toMatchObject({ code: 'sealed_value_invalid', fault: 'malformed' });
    }
  });

  it('refuses a value with one character changed, in its ciphertext, its tag or its header', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = await sealer.seal(BODY, CTX);
    const [header, , iv, ciphertext] = sealed.split('.') as [string, string, string, string];
    const ciphertextAt = header.length + 2 + iv.length + 1;
    for (const index of [ciphertextAt + 5, sealed.length - 3, ciphertextAt - 4]) {
      const err = thrown(() => sealer.open(flipped(sealed, index), CTX));
      expect(err, `changed at ${index}`).toBeInstanceOf(SealedValueInvalidError);
      expect(err).toMatchObject({ code: 'sealed_value_invalid', fault: 'altered' });
    }
    expect(ciphertext.length).toBeGreaterThan(10);
  });

  it('refuses a header rewritten to claim another row: the header is authenticated', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = await sealer.seal(BODY, CTX);
    const header = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: 'k-1', ctx: 'inbox_events/body/evt-2' })).toString('base64url');
    const moved = [header, ...sealed.split('.').slice(1)].join('.');
    const err = thrown(() => sealer.open(moved, 'inbox_events/body/evt-2'));
    expect(err).toBeInstanceOf(SealedValueInvalidError);
  });

  it('opens values sealed under an older key once a new current key is put first, and seals new ones under the new key', async () => {
    const before = await sealerOf('k-old');
    const old = await before.seal(BODY, CTX);
    const after = await sealerOf('k-new', 'k-old');
    expect(await after.openText(old, CTX)).toBe(BODY);
    const fresh = await after.seal(BODY, CTX);
    expect(after.currentKid).toBe('k-new');
    expect(after.keyIds).toEqual(['k-new', 'k-old']);
    expect(keyIdOf(fresh)).toBe('k-new');
    expect(thrown(() => before.open(fresh, CTX))).toBeInstanceOf(DataKeyMissingError);
  });

  it('reads a clear value (written before sealing) as it is', async () => {
    const sealer = await sealerOf('k-1');
    expect(await sealer.openText(BODY, CTX)).toBe(BODY);
    const bytes = Buffer.from('MSH|^~\\&|EMR|HOSPITAL');
    expect((await sealer.open(bytes, CTX)).equals(bytes)).toBe(true);
  });

  it('refuses a context that is empty or holds a control character', async () => {
    const sealer = await sealerOf('k-1');
    expect(() => sealer.seal(BODY, '')).toThrow(TypeError);
    expect(() => sealer.seal(BODY, 'inbox_events/body/evt\n1')).toThrow(TypeError);
  });
});

describe('bytes sealed to the packed form', () => {
  const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3000)]);
  const DOC = 'outbox_documents/content/doc-1';

  it("stores the compact form's parts as bytes: its header, then 22 bytes, the IV, the ciphertext and the tag", async () => {
    const sealer = await sealerOf('k-1');
    const sealed = sealer.sealBytes(PDF, DOC);
    const header = compactOf(sealed).split('.')[0]!;
    expect(sealed.toString('latin1', 0, header.length + 2)).toBe(`${header}.~`);
    expect(sealed.length).toBe(header.length + 2 + 4 + 12 + PDF.length + 16);
    expect(sealed.length).toBeLessThan(compactOf(sealed).length * 0.8);
    expect(keyIdOf(sealed)).toBe('k-1');
  });

  it('refuses a packed value cut short as malformed, wherever it is cut', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = sealer.sealBytes(PDF, DOC);
    const markAt = sealed.indexOf('.~');
    for (const length of [sealed.length - 1, sealed.length - 17, markAt + 40, markAt + 4, markAt + 1, 30]) {
      const err = thrown(() => sealer.open(sealed.subarray(0, length), DOC));
      expect(err, `cut at ${length}`).toMatchObject({ code: 'sealed_value_invalid', fault: 'malformed' });
    }
  });

  it('refuses a packed value with a byte changed in its IV, its ciphertext or its tag as altered, in its length as malformed', async () => {
    const sealer = await sealerOf('k-1');
    const sealed = sealer.sealBytes(PDF, DOC);
    const ivAt = sealed.indexOf('.~') + 6;
    const changedAt = (index: number) => {
      const copy = Buffer.from(sealed);
      copy[index] = copy[index]! ^ 1;
      return copy;
    };
    for (const index of [ivAt + 3, ivAt + 12 + 100, sealed.length - 5])
      expect(
        thrown(() => sealer.open(changedAt(index), DOC)),
        `changed at ${index}`,
      ).toMatchObject({ fault: 'altered' });
    expect(thrown(() => sealer.open(changedAt(ivAt - 2), DOC))).toMatchObject({ fault: 'malformed' });
  });

  it('still opens a compact value stored as bytes (written before the packed form)', async () => {
    const sealer = await sealerOf('k-1');
    const stored = Buffer.from(sealer.seal(BODY, CTX), 'latin1');
    expect(sealer.openText(stored, CTX)).toBe(BODY);
  });

  it('has no compact form for a clear value', () => {
    expect(() => compactOf(BODY)).toThrow(TypeError);
  });
});

describe('the sealed value is standard JWE', () => {
  /** The key of `kid` as jose (WebCrypto) takes it. */
  const joseKey = (kid: string) => webcrypto.subtle.importKey('raw', Buffer.from(keyMaterialOf(kid), 'base64url'), 'AES-GCM', false, ['encrypt', 'decrypt']);

  it('opens with jose, the header authenticated: text as it is stored, bytes once compactOf gives their compact form', async () => {
    const sealer = await sealerOf('k-1');
    const big = randomBytes(1024 * 1024);
    const cases: [string, Buffer][] = [
      [sealer.seal(BODY, CTX), Buffer.from(BODY)],
      [compactOf(sealer.sealBytes(Buffer.from(BODY), CTX)), Buffer.from(BODY)],
      [compactOf(sealer.sealBytes(big, CTX)), big],
    ];
    for (const [value, plain] of cases) {
      const opened = await compactDecrypt(value, await joseKey('k-1'));
      expect(Buffer.from(opened.plaintext).equals(plain)).toBe(true);
      expect(opened.protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM', kid: 'k-1', ctx: CTX });
    }
  });

  it('opens a value jose sealed, and refuses one jose sealed for another row', async () => {
    const sealer = await sealerOf('k-1');
    const byJose = async (ctx: string) =>
      new CompactEncrypt(Buffer.from(BODY)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'k-1', ctx }).encrypt(await joseKey('k-1'));
    expect(await sealer.openText(await byJose(CTX), CTX)).toBe(BODY);
    const elsewhere = await byJose('inbox_events/body/other');
    expect(thrown(() => sealer.open(elsewhere, CTX))).toBeInstanceOf(SealedValueMisplacedError);
  });
});

describe('createClearSealer (DATA_ENCRYPTION=off)', () => {
  it('writes text and bytes as they are and reads them back', async () => {
    const clear = createClearSealer();
    expect(clear.sealing).toBe(false);
    expect(clear.currentKid).toBeUndefined();
    expect(clear.keyIds).toEqual([]);
    expect(await clear.seal(BODY, CTX)).toBe(BODY);
    const bytes = Buffer.from([1, 2, 3]);
    expect((await clear.sealBytes(bytes, CTX)).equals(bytes)).toBe(true);
    expect(await clear.openText(BODY, CTX)).toBe(BODY);
  });

  it('names the kid of a sealed value when it has no keys', async () => {
    const sealed = await (await sealerOf('k-1')).seal(BODY, CTX);
    const err = thrown(() => createClearSealer().open(sealed, CTX));
    expect(err).toBeInstanceOf(DataKeyMissingError);
    expect(err).toMatchObject({ kid: 'k-1' });
  });

  it('opens values sealed while encryption was on when it has their keys', async () => {
    const sealed = await (await sealerOf('k-1')).seal(BODY, CTX);
    const clear = createClearSealer(await keySetOf('k-1'));
    expect(clear.keyIds).toEqual(['k-1']);
    expect(await clear.openText(sealed, CTX)).toBe(BODY);
  });
});
