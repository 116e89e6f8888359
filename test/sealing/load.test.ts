// The sealer the settings ask for: sealing under the key file's first key, or (DATA_ENCRYPTION=off) writing
// in clear while still opening what the file's keys sealed before.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataKeysError } from '../../src/sealing/errors.ts';
import { keyIdOf } from '../../src/sealing/format.ts';
import { loadSealer } from '../../src/sealing/load.ts';
import { clockOn20261125, keyFileText, keyJwk } from './builders.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-load-sealer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const path = join(dir, 'data-keys.json');
writeFileSync(path, keyFileText(keyJwk('k-new'), keyJwk('k-old')));
chmodSync(path, 0o600);
const CTX = 'outbox_documents/request/doc-1';

describe('loadSealer', () => {
  it("seals under the key file's first key", async () => {
    const sealer = await loadSealer({ encryption: 'on', source: { kind: 'path', path } });
    expect(sealer.sealing).toBe(true);
    expect(sealer.currentKid).toBe('k-new');
    expect(keyIdOf(await sealer.seal('{}', CTX))).toBe('k-new');
  });

  it("with encryption off writes in clear and opens what the file's keys sealed", async () => {
    const sealed = await (await loadSealer({ encryption: 'on', source: { kind: 'path', path } })).seal('{"label":"x"}', CTX);
    const clear = await loadSealer({ encryption: 'off', source: { kind: 'path', path } });
    expect(clear.sealing).toBe(false);
    expect(await clear.seal('{}', CTX)).toBe('{}');
    expect(await clear.openText(sealed, CTX)).toBe('{"label":"x"}');
    expect((await loadSealer({ encryption: 'off', source: { kind: 'none' } })).sealing).toBe(false);
  });

  it('generates the zero-configuration key on first use and seals under it', async () => {
    const sealer = await loadSealer(
      { encryption: 'on', source: { kind: 'generated', path: join(dir, 'zero', 'data-keys.json') } },
      { clock: clockOn20261125() },
    );
    expect(sealer.currentKid).toMatch(/^k-20261125-/);
  });

  it('stops at a key file it cannot use', async () => {
    await expect(loadSealer({ encryption: 'on', source: { kind: 'path', path: join(dir, 'missing.json') } })).rejects.toThrow(DataKeysError);
  });
});
