// file.url over real https: a certificate made with openssl at test time, served on loopback, trusted by
// the simulator; the file is fetched once and the simulator keeps its own copy. And a restart of a
// simulator on a database file keeps its state.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { createSimulator } from '../../src/simulator/simulator.ts';
import { PDF, simulatorFixture } from '../support/simulator-fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-https-'));
let server: Server;
let base: string;
let cert: string;
const fetches: string[] = [];

beforeAll(async () => {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    fetches.push(req.url ?? '');
    if (req.url === '/report.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end(PDF);
    else if (req.url === '/big.pdf') res.writeHead(200).end(Buffer.concat([PDF, Buffer.alloc(15 * 1024 * 1024)]));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('file.url', () => {
  it('fetches an https file once, keeps its own copy, and delivers it', async () => {
    const f = await simulatorFixture({ trustedCa: cert, clinic: { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } } });
    const body = f.labReport({ file: { url: `${base}/report.pdf`, filename: 'report.pdf' } });
    const res = await f.api('post', 'lab-reports').send(body);
    expect(res.body.resource.status).toBe('SENT');
    await f.api('post', 'lab-reports').send(body);
    expect(fetches.filter((u) => u === '/report.pdf')).toHaveLength(1);
    const [m] = (await f.http().get('/_sim/messages')).body as { attachment: { sha256: string; size: number; mimeType: string } }[];
    expect(m!.attachment).toEqual({
      name: 'report.pdf',
      mimeType: 'application/pdf',
      size: PDF.length,
      sha256: createHash('sha256').update(PDF).digest('hex'),
    });
    await f.close();
  });

  it.each([
    ['/big.pdf', 413, 'file_too_large'],
    ['/missing.pdf', 422, 'file_url_unreachable'],
  ])('refuses %s with %i %s', async (path, status, code) => {
    const f = await simulatorFixture({ trustedCa: cert });
    const res = await f.api('post', 'lab-reports').send(f.labReport({ file: { url: `${base}${path}`, filename: 'x.pdf' } }));
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    await f.close();
  });

  it('does not trust an unknown certificate', async () => {
    const f = await simulatorFixture();
    const res = await f.api('post', 'lab-reports').send(f.labReport({ file: { url: `${base}/report.pdf`, filename: 'x.pdf' } }));
    expect(res.body.error.code).toBe('file_url_unreachable');
    await f.close();
  });
});

describe('simulator state on a file', () => {
  it('survives a restart', async () => {
    const dbPath = join(dir, 'sim.db');
    const first = createSimulator({ dbPath, logger: silentLogger() });
    const clinicId = (await request(first.app.callback()).post('/_sim/clinics').send({})).body.clinicId as string;
    const key = (await request(first.app.callback()).post('/_sim/keys').send({ clinicId })).body.key as string;
    await request(first.app.callback()).post('/_sim/clock/advance').send({ seconds: 3600 });
    await first.stop();
    const second = createSimulator({ dbPath, logger: silentLogger() });
    const res = await request(second.app.callback()).get('/integration/v1/documents/nope').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(404);
    expect((await request(second.app.callback()).get('/_sim/clock')).body.offsetSeconds).toBe(3600);
    await second.stop();
  });
});
