// The data key file: a JWK Set whose first key is current; every way it can be wrong is refused with the key
// named by its kid (or its place) and never its material; new keys and files as `data-keys` makes them.
import { describe, expect, it } from 'vitest';
import { DataKeysError } from '../../src/sealing/errors.ts';
import { formatKeyFile, generateKeyFile, importKeySet, KEY_ID, newDataKey, parseKeyFile, withNewCurrentKey } from '../../src/sealing/keys.ts';
import { clockOn20261125, keyFileText, keyJwk, keyMaterialOf } from './builders.ts';

/** The message parseKeyFile refuses `text` with. */
function refusal(text: string): string {
  try {
    parseKeyFile(text, 'DATA_KEYS_PATH (/etc/emr-bridge/data-keys.json)');
  } catch (err) {
    expect(err).toBeInstanceOf(DataKeysError);
    expect((err as DataKeysError).code).toBe('data_keys_unusable');
    return (err as Error).message;
  }
  throw new Error('the key file was accepted');
}

describe('parseKeyFile', () => {
  it('reads a JWK Set, the first key current and the others kept in order', async () => {
    const file = parseKeyFile(keyFileText(keyJwk('k-new'), keyJwk('k-old')), 'test');
    expect(file.keys.map((k) => k.kid)).toEqual(['k-new', 'k-old']);
    const set = await importKeySet(file);
    expect(set.current.kid).toBe('k-new');
    expect(set.kids).toEqual(['k-new', 'k-old']);
    expect(set.get('k-old')?.kid).toBe('k-old');
    expect(set.get('k-gone')).toBeUndefined();
  });

  it('keeps members it does not use, and takes a key without alg', () => {
    const file = parseKeyFile(keyFileText(keyJwk('k-1', { alg: undefined, ext: true })), 'test');
    expect(file.keys[0]).toMatchObject({ kid: 'k-1', ext: true });
  });

  it('names the source and says what the file should be when it is not JSON, without quoting it', () => {
    const text = `{"keys": [{"kty": "oct", "kid": "k-1", "k": "${keyMaterialOf('k-1')}",}]}`;
    const message = refusal(text);
    expect(message).toContain('DATA_KEYS_PATH (/etc/emr-bridge/data-keys.json): not JSON');
    expect(message).toContain('JWK Set');
    expect(message).not.toContain(keyMaterialOf('k-1'));
  });

  it('refuses a file with no keys list, and one with an empty list', () => {
    expect(refusal(JSON.stringify([keyJwk('k-1')]))).toContain('no "keys" list');
    expect(refusal(keyFileText())).toContain('holds no key');
  });

  it.each([
    ['a key that is not symmetric', { kty: 'RSA' }, 'key k-bad: kty must be "oct"'],
    ['a key of 16 bytes', { k: Buffer.alloc(16, 7).toString('base64url') }, 'key k-bad: k holds 16 bytes; a data key is 32 bytes'],
    ['a key in padded base64', { k: `${Buffer.alloc(32, 7).toString('base64')}` }, 'key k-bad: k is not base64url'],
    ['a key with no k', { k: undefined }, 'key k-bad: k (the key, base64url) is missing'],
    ['another algorithm', { alg: 'A128KW' }, 'key k-bad: alg must be "dir"'],
    ['a signing key', { use: 'sig' }, 'key k-bad: use must be "enc"'],
  ])('refuses %s, naming its kid', (_what, overrides, expected) => {
    const good = keyJwk('k-good');
    const bad = keyJwk('k-bad', overrides);
    const message = refusal(keyFileText(good, bad));
    expect(message).toContain(expected);
    expect(message).not.toContain('k-good');
    for (const material of [good.k, bad.k].filter((k): k is string => typeof k === 'string')) expect(message).not.toContain(material);
  });

  it('names a key by its place when its kid is missing or unusable, never repeating the bad kid', () => {
    expect(refusal(keyFileText(keyJwk('k-1'), keyJwk('k-2', { kid: undefined })))).toContain('key #2: kid is missing');
    const spoken = `kid with ${keyMaterialOf('k-3')}`;
    const message = refusal(keyFileText(keyJwk('k-1'), keyJwk(spoken)));
    expect(message).toContain('key #2: kid must be 1 to 64 letters');
    expect(message).not.toContain(keyMaterialOf('k-3'));
  });

  it('refuses two keys with one kid', () => {
    expect(refusal(keyFileText(keyJwk('k-1'), keyJwk('k-1', { k: keyMaterialOf('other') })))).toContain('kid k-1 appears twice');
  });

  it('lists every problem at once', () => {
    const message = refusal(keyFileText(keyJwk('k-1', { kty: 'EC' }), keyJwk('k-2', { k: Buffer.from('short').toString('base64url') })));
    expect(message).toContain('key k-1: kty');
    expect(message).toContain('key k-2: k holds 5 bytes');
  });
});

describe('new keys', () => {
  it('names a new key after the clock day with six random hex digits, over 32 random bytes', () => {
    const key = newDataKey(clockOn20261125());
    expect(key.kid).toMatch(/^k-20261125-[0-9a-f]{6}$/);
    expect(key.kid).toMatch(KEY_ID);
    expect(Buffer.from(key.k, 'base64url')).toHaveLength(32);
    expect(key).toMatchObject({ kty: 'oct', alg: 'dir' });
    expect(newDataKey(clockOn20261125()).k).not.toBe(key.k);
  });

  it('writes a generated file that parses back to its one key', () => {
    const file = generateKeyFile(clockOn20261125());
    expect(parseKeyFile(formatKeyFile(file), 'test')).toEqual(file);
    expect(file.keys).toHaveLength(1);
  });

  it('puts a new key first and keeps the others in order, choosing a kid not yet taken', () => {
    const file = parseKeyFile(keyFileText(keyJwk('k-20261125-000000'), keyJwk('k-old')), 'test');
    let calls = 0;
    // The first kid drawn is taken already; the second is free.
    const random = (size: number) => Buffer.alloc(size, calls++ < 2 ? 0 : 1);
    const next = withNewCurrentKey(file, clockOn20261125(), random);
    expect(next.keys.map((k) => k.kid)).toEqual(['k-20261125-010101', 'k-20261125-000000', 'k-old']);
    expect(next.keys.slice(1)).toEqual(file.keys);
  });
});
