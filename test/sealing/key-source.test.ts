// Where the data keys come from: a file its owner alone may read (0600 or stricter), a command's standard
// output (its failures named by exit, never by what it printed), or a file generated once under DATA_DIR;
// key files written whole, mode 0600, never replaced by accident.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataKeysError } from '../../src/sealing/errors.ts';
import { readDataKeyFile, readKeyFileAt, readKeyFileFromCommand, writeKeyFile, zeroConfigKeyFile } from '../../src/sealing/key-source.ts';
import { parseKeyFile } from '../../src/sealing/keys.ts';
import { clockOn20261125, keyFileText, keyJwk, keyMaterialOf } from './builders.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-key-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A key file holding `text` with `mode`, in a folder of its own. */
function keyFileAt(mode: number, text = keyFileText(keyJwk('k-1'), keyJwk('k-0'))): string {
  const folder = join(dir, `f${++files}`);
  mkdirSync(folder);
  const path = join(folder, 'data-keys.json');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

/** What `run` throws: a DataKeysError's message. */
async function failure(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(DataKeysError);
    return (err as Error).message;
  }
  throw new Error('it was accepted');
}

describe('DATA_KEYS_PATH', () => {
  it.each([0o600, 0o400])('reads a key file of mode 0%s', (mode) => {
    expect(readKeyFileAt(keyFileAt(mode)).keys.map((k) => k.kid)).toEqual(['k-1', 'k-0']);
  });

  it.each([0o644, 0o640, 0o604, 0o660])('refuses a key file of mode 0%s, naming the path and the mode', async (mode) => {
    const path = keyFileAt(mode);
    const message = await failure(() => readKeyFileAt(path));
    expect(message).toContain(`DATA_KEYS_PATH (${path}): has mode 0${mode.toString(8)}`);
    expect(message).toContain('0600 or stricter');
    expect(message).toContain(`chmod 600 ${path}`);
  });

  it('names a missing file and a folder', async () => {
    expect(await failure(() => readKeyFileAt(join(dir, 'none.json')))).toContain('no such file');
    expect(await failure(() => readKeyFileAt(dir))).toContain('is a directory');
  });

  it('names the path of a malformed file without printing its keys', async () => {
    const path = keyFileAt(0o600, keyFileText(keyJwk('k-1', { k: keyMaterialOf('k-1').slice(0, 20) })));
    const message = await failure(() => readKeyFileAt(path));
    expect(message).toContain(`DATA_KEYS_PATH (${path}): key k-1: k holds 15 bytes`);
    expect(message).not.toContain(keyMaterialOf('k-1').slice(0, 20));
  });
});

describe('DATA_KEYS_COMMAND', () => {
  it("reads the key file from the command's standard output", async () => {
    const path = keyFileAt(0o644);
    const file = await readKeyFileFromCommand(`cat '${path}' | cat`);
    expect(file.keys.map((k) => k.kid)).toEqual(['k-1', 'k-0']);
  });

  it('names the exit status of a failing command, never what it printed', async () => {
    const message = await failure(() => readKeyFileFromCommand(`echo '${keyMaterialOf('k-1')}'; exit 3`));
    expect(message).toContain('DATA_KEYS_COMMAND: exited with status 3');
    expect(message).not.toContain(keyMaterialOf('k-1'));
  });

  it('stops a command that runs too long, with what it started', async () => {
    const started = Date.now();
    const message = await failure(() => readKeyFileFromCommand('sleep 20 | sleep 20', { timeoutMs: 300 }));
    expect(message).toContain('DATA_KEYS_COMMAND: did not finish within');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('names a command whose output is not a key file without quoting the output', async () => {
    const message = await failure(() => readKeyFileFromCommand(`echo '{"keys": [${keyMaterialOf('k-1')}'`));
    expect(message).toContain("DATA_KEYS_COMMAND's output: not JSON");
    expect(message).not.toContain(keyMaterialOf('k-1'));
    expect(await failure(() => readKeyFileFromCommand('true'))).toContain("DATA_KEYS_COMMAND's output: not JSON");
  });
});

describe('writeKeyFile', () => {
  it('writes mode 0600 and leaves no temporary file behind', () => {
    const path = join(dir, 'written', 'keys.json');
    writeKeyFile(path, parseKeyFile(keyFileText(keyJwk('k-1')), 'test'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(parseKeyFile(readFileSync(path, 'utf8'), 'test').keys[0].kid).toBe('k-1');
    expect(readdirSync(join(dir, 'written'))).toEqual(['keys.json']);
  });

  it('refuses to replace an existing file unless asked to overwrite it', () => {
    const path = join(dir, 'once', 'keys.json');
    writeKeyFile(path, parseKeyFile(keyFileText(keyJwk('k-1')), 'test'));
    expect(() => writeKeyFile(path, parseKeyFile(keyFileText(keyJwk('k-2')), 'test'))).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(parseKeyFile(readFileSync(path, 'utf8'), 'test').keys[0].kid).toBe('k-1');
    writeKeyFile(path, parseKeyFile(keyFileText(keyJwk('k-2')), 'test'), { overwrite: true });
    expect(parseKeyFile(readFileSync(path, 'utf8'), 'test').keys[0].kid).toBe('k-2');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'once'))).toEqual(['keys.json']);
  });
});

describe('zero-configuration mode', () => {
  it('generates the key file under the data folder once (mode 0600) and keeps it from then on', () => {
    const dataDir = join(dir, 'zero', 'data');
    const path = zeroConfigKeyFile(dataDir, clockOn20261125());
    expect(path).toBe(join(dataDir, 'data-keys.json'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const first = readFileSync(path, 'utf8');
    expect(readKeyFileAt(path).keys[0].kid).toMatch(/^k-20261125-[0-9a-f]{6}$/);
    expect(zeroConfigKeyFile(dataDir, clockOn20261125())).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(first);
  });
});

describe('readDataKeyFile', () => {
  it('reads each source the settings name, and nothing for none', async () => {
    const path = keyFileAt(0o600);
    expect((await readDataKeyFile({ kind: 'path', path }))?.keys[0].kid).toBe('k-1');
    expect((await readDataKeyFile({ kind: 'command', command: `cat '${path}'` }))?.keys[0].kid).toBe('k-1');
    const generated = join(dir, 'generated', 'data-keys.json');
    expect((await readDataKeyFile({ kind: 'generated', path: generated }, { clock: clockOn20261125() }))?.keys[0].kid).toMatch(/^k-20261125-/);
    expect(await readDataKeyFile({ kind: 'none' })).toBeUndefined();
  });
});
