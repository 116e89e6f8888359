// `emr-bridge data-keys`: generate prints or writes (mode 0600, never over a file without --force) a key file
// with one new key; add puts a new current key first in a file and keeps the others, so values sealed before
// still open; what each refuses, with exit 2 and the file left as it was.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { readKeyFileAt } from '../../src/sealing/key-source.ts';
import { importKeySet, parseKeyFile } from '../../src/sealing/keys.ts';
import { createSealer } from '../../src/sealing/sealer.ts';
import { captureOutput } from '../support/captured-output.ts';
import { keyFileText, keyJwk } from '../sealing/builders.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-data-keys-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
});

const dataKeys = (...args: string[]) => captureOutput(() => main(['data-keys', ...args]));
let files = 0;
const freshPath = () => join(dir, `keys-${++files}.json`);

/** A key file at a new path holding `kids` (first current), with `mode`. */
function keyFileWith(kids: string[], mode = 0o600): string {
  const path = freshPath();
  writeFileSync(path, keyFileText(...kids.map((kid) => keyJwk(kid))));
  chmodSync(path, mode);
  return path;
}

describe('emr-bridge data-keys generate', () => {
  it('prints a key file with one new key when given no --out', async () => {
    const res = await dataKeys('generate');
    expect(res.code, res.err).toBe(0);
    const file = parseKeyFile(res.out, 'printed');
    expect(file.keys).toHaveLength(1);
    expect(file.keys[0].kid).toMatch(/^k-\d{8}-[0-9a-f]{6}$/);
    expect(res.err).toContain(`current key ${file.keys[0].kid}`);
    expect(res.err).not.toContain(file.keys[0].k);
  });

  it('writes the key file with mode 0600 and prints its kid', async () => {
    const out = freshPath();
    const res = await dataKeys('generate', '--out', out);
    expect(res.code, res.err).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const file = readKeyFileAt(out);
    expect(res.out.trim()).toBe(file.keys[0].kid);
    expect(res.err).toContain(`written to ${out} (mode 0600)`);
  });

  it('refuses to overwrite an existing file, exit 2, and replaces it with --force', async () => {
    const out = keyFileWith(['k-kept']);
    const before = readFileSync(out, 'utf8');
    const refused = await dataKeys('generate', '--out', out);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('exists; not overwritten');
    expect(readFileSync(out, 'utf8')).toBe(before);
    const forced = await dataKeys('generate', '--out', out, '--force');
    expect(forced.code, forced.err).toBe(0);
    expect(readKeyFileAt(out).keys.map((k) => k.kid)).toEqual([forced.out.trim()]);
  });

  it('refuses --file, which goes with add', async () => {
    const res = await dataKeys('generate', '--file', freshPath());
    expect(res.code).toBe(2);
    expect(res.err).toContain('--file goes with add');
  });
});

describe('emr-bridge data-keys add', () => {
  it('puts a new current key first, keeps the others, and values sealed before still open', async () => {
    const path = keyFileWith(['k-b', 'k-a']);
    const sealedBefore = await createSealer(await importKeySet(readKeyFileAt(path))).seal('{"name":"Marker"}', 'inbox_events/body/evt-1');
    const res = await dataKeys('add', '--file', path);
    expect(res.code, res.err).toBe(0);
    const kid = res.out.trim();
    const after = readKeyFileAt(path);
    expect(after.keys.map((k) => k.kid)).toEqual([kid, 'k-b', 'k-a']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const sealer = createSealer(await importKeySet(after));
    expect(sealer.currentKid).toBe(kid);
    expect(await sealer.openText(sealedBefore, 'inbox_events/body/evt-1')).toBe('{"name":"Marker"}');
    expect(res.err).toContain('k-b, k-a still open older values');
  });

  it('adds to the file DATA_KEYS_PATH names when given no --file', async () => {
    const path = keyFileWith(['k-a']);
    vi.stubEnv('DATA_KEYS_PATH', path);
    const res = await dataKeys('add');
    expect(res.code, res.err).toBe(0);
    expect(readKeyFileAt(path).keys.map((k) => k.kid)).toEqual([res.out.trim(), 'k-a']);
  });

  it('refuses a key file others may read, exit 2, naming its mode and leaving it as it was', async () => {
    const path = keyFileWith(['k-a'], 0o644);
    const before = readFileSync(path, 'utf8');
    const res = await dataKeys('add', '--file', path);
    expect(res.code).toBe(2);
    expect(res.err).toContain('has mode 0644');
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('asks for --file when the keys come from DATA_KEYS_COMMAND', async () => {
    vi.stubEnv('DATA_KEYS_COMMAND', 'vault kv get -field=data-keys secret/emr-bridge');
    const res = await dataKeys('add');
    expect(res.code).toBe(2);
    expect(res.err).toContain('name the key file with --file');
  });

  it('names a missing file and the command that makes one', async () => {
    const path = freshPath();
    const res = await dataKeys('add', '--file', path);
    expect(res.code).toBe(2);
    expect(res.err).toContain(`no key file at ${path}; make one with data-keys generate --out ${path}`);
  });
});

describe('emr-bridge data-keys', () => {
  it('names its verbs when given none, exit 2, and answers --help', async () => {
    const none = await dataKeys();
    expect(none.code).toBe(2);
    expect(none.err).toContain('data-keys generate');
    const help = await dataKeys('--help');
    expect(help.code).toBe(0);
    for (const option of ['--out', '--force', '--file']) expect(help.out).toContain(option);
  });
});
