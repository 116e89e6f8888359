// `emr-bridge credentials`: add prints a random token once and keeps only its hash (file mode 0600), a name
// added again gets a new token, list shows names and roles only, remove drops one, and a bad file or bad
// arguments are refused with the file left as it was.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createCredentialCheck } from '../../src/access/credentials.ts';
import { loadCredentialsFile } from '../../src/access/credentials-file.ts';
import { main } from '../../src/cli/main.ts';
import { captureOutput } from '../support/captured-output.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-credentials-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

let n = 0;
const freshFile = () => join(dir, `creds-${++n}.json`);
const credentials = (...args: string[]) => captureOutput(() => main(['credentials', ...args]));

describe('emr-bridge credentials add', () => {
  it('prints a new token once and writes only its hash, mode 0600', async () => {
    const file = freshFile();
    const res = await credentials('add', 'night-desk', '--role', 'viewer', '--file', file);
    expect(res.code, res.err).toBe(0);
    const token = res.out.trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.err).toContain('night-desk (viewer) added');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(token);
    const check = createCredentialCheck({ credentials: loadCredentialsFile(file) });
    expect(check.verify(token)).toEqual({ name: 'night-desk', role: 'viewer' });
  });

  it('gives a name that exists a new token, the old one no longer matching', async () => {
    const file = freshFile();
    const first = (await credentials('add', 'integration', '--role', 'viewer', '--file', file)).out.trim();
    await credentials('add', 'other', '--role', 'viewer', '--file', file);
    const again = await credentials('add', 'integration', '--role', 'operator', '--file', file);
    expect(again.err).toContain('new token');
    const check = createCredentialCheck({ credentials: loadCredentialsFile(file) });
    expect(check.verify(first)).toBeUndefined();
    expect(check.verify(again.out.trim())).toEqual({ name: 'integration', role: 'operator' });
    expect(loadCredentialsFile(file).map((c) => c.name)).toEqual(['integration', 'other']);
  });

  it('writes to ADMIN_CREDENTIALS_FILE when no --file is given', async () => {
    const file = freshFile();
    vi.stubEnv('ADMIN_CREDENTIALS_FILE', file);
    expect((await credentials('add', 'desk', '--role', 'operator')).code).toBe(0);
    expect(loadCredentialsFile(file).map((c) => c.name)).toEqual(['desk']);
  });

  it.each([
    [['add', 'desk', '--role', 'root'], /--role must be viewer or operator/],
    [['add', 'desk'], /--role must be viewer or operator/],
    [['add', 'Jane Doe', '--role', 'viewer'], /the name takes letters/],
    [['add', 'admin', '--role', 'viewer'], /admin is the name ADMIN_TOKEN signs in as/],
    [['add'], /usage: credentials add/],
    [['rotate', 'desk'], /usage: credentials add/],
  ])('refuses %j with exit 2 and writes nothing', async (args, message) => {
    const file = freshFile();
    const res = await credentials(...args, '--file', file);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(message);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses to change a file that is not valid, leaving it as it was', async () => {
    const file = freshFile();
    writeFileSync(file, '[{"name": "x", "role": "viewer", "sha256": "short"}]');
    const res = await credentials('add', 'desk', '--role', 'viewer', '--file', file);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/ADMIN_CREDENTIALS_FILE: .*entry 1: sha256.*left unchanged/s);
    expect(res.out).toBe('');
    expect(readFileSync(file, 'utf8')).toBe('[{"name": "x", "role": "viewer", "sha256": "short"}]');
  });
});

describe('emr-bridge credentials list and remove', () => {
  it('lists names and roles, ADMIN_TOKEN first, never a hash', async () => {
    const file = freshFile();
    await credentials('add', 'night-desk', '--role', 'viewer', '--file', file);
    await credentials('add', 'integration', '--role', 'operator', '--file', file);
    vi.stubEnv('ADMIN_TOKEN', 'an-admin-token-for-the-list');
    const res = await credentials('list', '--file', file);
    expect(res.code).toBe(0);
    expect(
      res.out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(/\s+/).slice(0, 2)),
    ).toEqual([
      ['admin', 'operator'],
      ['night-desk', 'viewer'],
      ['integration', 'operator'],
    ]);
    for (const c of loadCredentialsFile(file)) expect(res.out).not.toContain(c.sha256);
  });

  it('removes one credential and refuses a name it does not have', async () => {
    const file = freshFile();
    await credentials('add', 'a', '--role', 'viewer', '--file', file);
    await credentials('add', 'b', '--role', 'viewer', '--file', file);
    expect((await credentials('remove', 'a', '--file', file)).code).toBe(0);
    expect(loadCredentialsFile(file).map((c) => c.name)).toEqual(['b']);
    expect((await credentials('remove', 'a', '--file', file)).err).toContain('no credential named a');
  });
});
