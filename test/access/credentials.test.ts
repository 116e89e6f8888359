// Named admin credentials: tokens matched by their SHA-256 (ADMIN_TOKEN as the operator `admin`), and the
// ADMIN_CREDENTIALS_FILE checks: every bad file is a ConfigError naming the setting and the entry, and the
// adapter refuses to start on one before it writes anything.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCredentialCheck, sha256Hex } from '../../src/access/credentials.ts';
import { loadCredentialsFile, parseCredentials } from '../../src/access/credentials-file.ts';
import { parseConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter } from '../../src/runtime/adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-credentials-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hash = (t: string) => sha256Hex(t);
const fileWith = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const problemsOf = (path: string): string[] => {
  try {
    loadCredentialsFile(path);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('the file was accepted');
};

describe('the credential check', () => {
  const check = createCredentialCheck({
    adminToken: 'the-admin-token-0000001',
    credentials: [
      { name: 'night-desk', role: 'viewer', sha256: hash('viewer-token') },
      { name: 'integration', role: 'operator', sha256: hash('operator-token').toUpperCase() },
    ],
  });

  it('knows ADMIN_TOKEN as the operator admin, and each named token as its name and role', () => {
    expect(check.verify('the-admin-token-0000001')).toEqual({ name: 'admin', role: 'operator' });
    expect(check.verify('viewer-token')).toEqual({ name: 'night-desk', role: 'viewer' });
    expect(check.verify('operator-token')).toEqual({ name: 'integration', role: 'operator' });
  });

  it('matches no other token, however close', () => {
    for (const t of ['', 'viewer-token ', 'Viewer-token', 'the-admin-token-000000', hash('viewer-token')]) expect(check.verify(t)).toBeUndefined();
  });

  it('lists names and roles, never digests', () => {
    expect(check.list()).toEqual([
      { name: 'admin', role: 'operator' },
      { name: 'night-desk', role: 'viewer' },
      { name: 'integration', role: 'operator' },
    ]);
  });

  it('works without ADMIN_TOKEN and without named credentials', () => {
    expect(createCredentialCheck({ credentials: [] }).verify('anything')).toBeUndefined();
  });
});

describe('ADMIN_CREDENTIALS_FILE', () => {
  it('reads a valid file', () => {
    const path = fileWith('ok.json', [
      { name: 'night-desk', role: 'viewer', sha256: hash('a') },
      { name: 'ops.team_1', role: 'operator', sha256: hash('b') },
    ]);
    expect(loadCredentialsFile(path)).toEqual([
      { name: 'night-desk', role: 'viewer', sha256: hash('a') },
      { name: 'ops.team_1', role: 'operator', sha256: hash('b') },
    ]);
  });

  it.each([
    ['a file that is not there', null, /cannot read .*ENOENT/],
    ['a file that is not JSON', '[{"name": ', /is not JSON/],
    ['JSON that is not an array', { name: 'x' }, /must hold a JSON array/],
    ['an unknown role', [{ name: 'x', role: 'admin', sha256: hash('a') }], /entry 1: role/],
    ['a missing field', [{ name: 'x', role: 'viewer' }], /entry 1: sha256/],
    ['an unknown field', [{ name: 'x', role: 'viewer', sha256: hash('a'), token: 'a' }], /entry 1: .*token/],
    ['a short hash', [{ name: 'x', role: 'viewer', sha256: hash('a').slice(0, 32) }], /entry 1: sha256: .*64 hex digits/],
    ['a hash that is not hex', [{ name: 'x', role: 'viewer', sha256: 'z'.repeat(64) }], /entry 1: sha256/],
    ['a name with a space', [{ name: 'Jane Doe', role: 'viewer', sha256: hash('a') }], /entry 1: name/],
    ['the name admin', [{ name: 'admin', role: 'viewer', sha256: hash('a') }], /entry 1: admin is the name ADMIN_TOKEN signs in as/],
    [
      'a name used twice',
      [
        { name: 'x', role: 'viewer', sha256: hash('a') },
        { name: 'x', role: 'operator', sha256: hash('b') },
      ],
      /entry 2: the name x is used twice/,
    ],
    [
      'a token used twice',
      [
        { name: 'x', role: 'viewer', sha256: hash('a') },
        { name: 'y', role: 'operator', sha256: hash('a').toUpperCase() },
      ],
      /entry 2 \(y\): the same token as another credential/,
    ],
  ])('refuses %s, naming the setting', (label, content, message) => {
    const path = content === null ? join(dir, 'absent.json') : fileWith(`${label.replace(/\W+/g, '-')}.json`, content);
    const problems = problemsOf(path);
    expect(problems.every((p) => p.startsWith('ADMIN_CREDENTIALS_FILE: '))).toBe(true);
    expect(problems.join('\n')).toMatch(message);
  });

  it('names every bad entry at once, and never a digest', () => {
    const { problems } = parseCredentials(
      JSON.stringify([
        { name: 'a', role: 'root', sha256: hash('a') },
        { name: 'b', role: 'viewer', sha256: 'abc' },
      ]),
      'creds.json',
    );
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).not.toContain(hash('a'));
  });

  it('stops the adapter before it writes anything', async () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const bad = fileWith('bad-for-start.json', [{ name: 'x', role: 'superuser', sha256: hash('a') }]);
    const config = parseConfig({ PORT: '0', DATA_DIR: data, ADMIN_CREDENTIALS_FILE: bad });
    await expect(startAdapter({ config, logger: silentLogger() })).rejects.toThrow(/ADMIN_CREDENTIALS_FILE: .*entry 1: role/);
    expect(readdirSync(data)).toEqual([]);
  });
});
