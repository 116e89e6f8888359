// A fork's own EMR passed to startAdapter: with zero configuration no bundled FHIR server starts (nothing
// on PORT+2, no fhirBaseUrl anywhere, a past one dropped from bundled.json) and the service's events land
// in that EMR; /readyz reports the EMR (its port's ping) and the service, while only the database and the
// workers decide whether it answers 200, so an EMR or service outage never stops the receiver.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter } from '../../src/runtime/adapter.ts';
import { json, threeFreePorts } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-own-emr-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

type Ready = { status: number; body: { status: string; checks: Record<string, 'ok' | 'failing'> } };
const readyz = (url: string) => json('GET', `${url}/readyz`) as Promise<Ready>;

describe('an adapter given its own EMR', () => {
  it("starts no bundled FHIR server with zero configuration, and the service's events land in its EMR", async () => {
    const dir = tempDir();
    // A past zero-configuration run left the bundled FHIR server's address here.
    writeFileSync(join(dir, 'bundled.json'), JSON.stringify({ fhirBaseUrl: 'http://127.0.0.1:1/stale' }));
    const port = await threeFreePorts();
    const emr = createMemoryEmr();
    const adapter = await startAdapter({
      config: parseConfig({ PORT: String(port), DATA_DIR: dir, PUSHER_SCAN_CRON: '0 0 1 1 *' }),
      logger: silentLogger(),
      emr,
    });
    cleanups.push(() => adapter.close());

    expect(adapter.url).toBe(`http://127.0.0.1:${port}`);
    expect(adapter.serviceUrl).toBe(`http://127.0.0.1:${port + 1}`);
    expect(adapter.emrAddress).toBeUndefined();
    expect(await refusesConnections(port + 2)).toBe(true);
    const saved = JSON.parse(readFileSync(join(dir, 'bundled.json'), 'utf8')) as Record<string, unknown>;
    expect(saved).not.toHaveProperty('fhirBaseUrl');
    expect(saved.serviceUrl).toBe(adapter.serviceUrl);
    // No FHIR sign-in either: no key made for it, no JWKS served.
    expect(() => readFileSync(join(dir, 'fhir-client-key.pem'))).toThrow();
    expect((await json('GET', `${adapter.url}/.well-known/jwks.json`)).status).toBe(404);

    const created = await json<{ serviceId: string }>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId });
    expect(created.status).toBe(201);
    await waitFor(() => emr.records.appointment.has(created.body.serviceId) || undefined);
    expect(emr.records.patient.size).toBe(1);
  });

  it('reports the EMR and the service in /readyz, decided by the database and the workers alone', async () => {
    const emr = createMemoryEmr();
    const adapter = await startAdapter({ config: parseConfig({ PORT: '0', DATA_DIR: tempDir(), PUSHER_SCAN_CRON: '0 0 1 1 *' }), logger: silentLogger(), emr });
    cleanups.push(() => adapter.close());
    const advance = (seconds: number) => json('POST', `${adapter.serviceUrl}/_sim/clock/advance`, { seconds });

    expect(await readyz(adapter.url)).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', workers: 'ok', emr: 'ok', service: 'ok' } },
    });
    const pings = emr.calls;
    // Probes within a few seconds (on the adapter's clock) reuse the last answer: the EMR is not asked again.
    for (let i = 0; i < 5; i++) await readyz(adapter.url);
    expect(emr.calls).toBe(pings);

    emr.down = true;
    await advance(10);
    const during = await readyz(adapter.url);
    expect(during).toMatchObject({ status: 200, body: { status: 'ready', checks: { emr: 'failing', database: 'ok', workers: 'ok' } } });
    // The receiver still takes the service's webhooks meanwhile: they wait in the inbox for the EMR.
    const created = await json<{ serviceId: string }>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId });
    await waitFor(async () => {
      const deliveries = (await json<{ statusCode: number | null }[]>('GET', `${adapter.serviceUrl}/_sim/deliveries`)).body;
      return deliveries.some((d) => d.statusCode === 200) || undefined;
    });
    expect(emr.records.appointment.has(created.body.serviceId)).toBe(false);

    emr.down = false;
    await advance(10);
    expect((await readyz(adapter.url)).body.checks.emr).toBe('ok');
  });

  it('says the service is failing when nothing answers at SERVICE_BASE_URL, and stays ready', async () => {
    const adapter = await startAdapter({
      config: quietAdapterConfig(tempDir(), 'own-emr-admin-token-0001'),
      logger: silentLogger(),
      emr: createMemoryEmr(),
    });
    cleanups.push(() => adapter.close());
    expect(await readyz(adapter.url)).toMatchObject({ status: 200, body: { checks: { service: 'failing', emr: 'ok', database: 'ok', workers: 'ok' } } });
  });
});
