// The banner `emr-bridge serve` prints. Its first line is a contract (scripts read `listening on <url>`, a
// loopback URL even for a wildcard bind); the lines after it are for a person, and must say what is true: a
// wildcard bind (HOST=0.0.0.0, as in the container image) listens on every interface, and its 127.0.0.1
// URLs reach it from this machine only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../bench/support/child.ts';
import { bannerLines, type BannerView } from '../../src/cli/serve.ts';
import { parseConfig } from '../../src/config.ts';
import { waitFor } from '../support/wait.ts';

const bundled = (host: string, extra: Record<string, string> = {}) => parseConfig({ HOST: host, DATA_DIR: '/data', ...extra });

const demo: BannerView = {
  url: 'http://127.0.0.1:3000',
  adminUrl: 'http://127.0.0.1:3000',
  webhookUrl: 'http://127.0.0.1:3000/webhooks/service',
  adminToken: 'abcdefghijklmnopqrstuvwx',
  serviceUrl: 'http://127.0.0.1:3001',
  emr: { title: 'FHIR R4 EMR', address: 'http://127.0.0.1:3002/fhir/R4', detail: 'bundled FHIR server, sign-in: smart', standIn: 'FHIR server' },
  clinicId: 'clinic-1',
};

const field = (lines: string[], name: string) => lines.find((l) => l.startsWith(`  ${name.padEnd(15)}`));

describe('the serve banner after its first line', () => {
  it('on loopback (the default) shows the URLs and says nothing of other interfaces', () => {
    const lines = bannerLines(demo, bundled('127.0.0.1'));
    expect(field(lines, 'adapter')).toBe('  adapter        http://127.0.0.1:3000  (webhooks http://127.0.0.1:3000/webhooks/service)');
    expect(field(lines, 'service')).toBe('  service        http://127.0.0.1:3001  (bundled simulator)');
    expect(field(lines, 'interfaces')).toBeUndefined();
    expect(lines.join('\n')).not.toContain(demo.adminToken);
  });

  it('on 0.0.0.0 says it listens on all interfaces, with each port, and what its 127.0.0.1 URLs reach', () => {
    const lines = bannerLines(demo, bundled('0.0.0.0'));
    const at = lines.findIndex((l) => l.startsWith('  interfaces'));
    expect(lines[at]).toBe('  interfaces     all (0.0.0.0): ports 3000 (adapter), 3001 (simulator), 3002 (FHIR server)');
    expect(lines.slice(at + 1, at + 3).join(' ')).toMatch(/127\.0\.0\.1 above reaches them from this machine only .*published/);
    // The URL columns stay URLs a person (and the image test) can use on this machine.
    expect(field(lines, 'adapter')).toMatch(/^ {2}adapter {8}http:\/\/127\.0\.0\.1:3000 /);
    expect(field(lines, 'FHIR R4 EMR')).toMatch(/^ {2}FHIR R4 EMR {4}http:\/\/127\.0\.0\.1:3002\/fhir\/R4 /);
  });

  it('names :: as it is, and an admin listener of its own on a wildcard too; real parts are not ours to list', () => {
    const view: BannerView = {
      ...demo,
      adminUrl: 'http://127.0.0.1:3001',
      serviceUrl: 'https://service.example.test',
      emr: { title: 'FHIR R4 EMR', address: 'https://emr.example.test/fhir', detail: 'real, sign-in: none' },
    };
    delete view.clinicId;
    const config = parseConfig({
      HOST: '::',
      ADMIN_HOST: '0.0.0.0',
      ADMIN_PORT: '3001',
      DATA_DIR: '/data',
      SERVICE_BASE_URL: 'https://service.example.test',
      FHIR_BASE_URL: 'https://emr.example.test/fhir',
      SERVICE_API_KEY: 'k',
      SERVICE_KEY_ID: 'kid',
      SERVICE_SIGNING_SECRETS: 's',
      ADMIN_TOKEN: 'abcdefghijklmnopqrstuvwx',
    });
    const lines = bannerLines(view, config);
    expect(field(lines, 'interfaces')).toBe('  interfaces     all (:: and 0.0.0.0): ports 3000 (adapter), 3001 (admin API)');
    expect(field(lines, 'service')).toBe('  service        https://service.example.test  (real)');
  });

  it('says whether patient data is sealed at rest, under which key and from where, or why it is written in clear', () => {
    expect(field(bannerLines({ ...demo, sealedUnder: 'k-20261125-abcdef' }, bundled('127.0.0.1')), 'data at rest')).toBe(
      '  data at rest   sealed under data key k-20261125-abcdef  (generated, in /data/data-keys.json)',
    );
    expect(field(bannerLines({ ...demo, sealedUnder: 'k-1' }, bundled('127.0.0.1', { DATA_KEYS_PATH: '/run/keys.json' })), 'data at rest')).toBe(
      '  data at rest   sealed under data key k-1  (DATA_KEYS_PATH)',
    );
    expect(field(bannerLines(demo, bundled('127.0.0.1', { DATA_ENCRYPTION: 'off' })), 'data at rest')).toBe('  data at rest   IN CLEAR  (DATA_ENCRYPTION=off)');
    expect(field(bannerLines(demo, bundled('127.0.0.1', { DATABASE_URL: 'postgres://db.internal/emr' })), 'data at rest')).toMatch(
      /IN CLEAR {2}\(replicas on PostgreSQL share no data key/,
    );
  });

  it('with one address bound (not a wildcard), adds no interfaces line: its URLs say where it is', () => {
    const view = { ...demo, url: 'http://10.1.2.3:3000', adminUrl: 'http://10.1.2.3:3000' };
    expect(field(bannerLines(view, bundled('10.1.2.3')), 'interfaces')).toBeUndefined();
  });
});

describe('emr-bridge serve on 0.0.0.0, as in the image', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'emr-bridge-banner-'));
  let child: Child | undefined;
  afterAll(async () => {
    await child?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps its first line exactly `listening on http://127.0.0.1:<port>`, then says it listens on all interfaces', async () => {
    const env = {
      HOST: '0.0.0.0',
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SERVICE_BASE_URL: '',
      FHIR_BASE_URL: '',
      ADMIN_TOKEN: '',
      DATABASE_URL: '',
    };
    child = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 40_000 });
    const port = new URL(child.url).port;
    const out = await waitFor(() => (/^ {2}admin token /m.test(child!.output()) ? child!.output() : undefined), 20_000);
    expect(out.split('\n')[0]).toBe(`listening on http://127.0.0.1:${port}`);
    expect(out).toMatch(
      new RegExp(`^ {2}interfaces {5}all \\(0\\.0\\.0\\.0\\): ports ${port} \\(adapter\\), \\d+ \\(simulator\\), \\d+ \\(FHIR server\\)$`, 'm'),
    );
  });
});
