// Slot booking under SIGKILL: the adapter (`emr-bridge serve`, FHIR_APPOINTMENT_BOOKING=slot) runs as a child
// beside the simulator and the bundled FHIR server's vendor profile, behind a proxy that kills the adapter the
// moment the EMR has answered its first booking, so the answer never reaches it and nothing is committed. After
// the restart on the same data folder the event is applied again: the booking is found, not made twice, and the
// Slot holds one appointment.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Child, startChild } from '../../bench/support/child.ts';
import { type RunningFhirServer, startFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { clinicTime } from '../support/clinic-time.ts';
import { ADMIN, freePort, json, subscribeClinic } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const SYSTEM = 'urn:emr-bridge:service';

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

/** Passes every request to the EMR; calls `onBooked` instead of answering the first booking the EMR took. */
async function killingProxy(upstream: string, onBooked: () => void): Promise<{ url: string; close(): Promise<void> }> {
  let fired = false;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const answer = await fetch(`${upstream}${req.url}`, { method: req.method ?? 'GET', headers, ...(body.length ? { body } : {}) });
      const text = Buffer.from(await answer.arrayBuffer());
      if (!fired && req.method === 'POST' && req.url === '/Appointment' && answer.status === 201) {
        fired = true;
        onBooked();
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
      });
      res.writeHead(answer.status, out);
      res.end(text);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
}, 30_000);

describe('a slot booking killed between the EMR’s answer and the commit', () => {
  it('is found again after the restart: one appointment in the Slot, nothing booked twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-vendor-crash-'));
    const sim = await startSimulatorServer({ logger: silentLogger() });
    const fhir: RunningFhirServer = await startFhirServer({ logger: silentLogger(), profile: 'vendor' });
    let adapter: Child | undefined;
    const proxy = await killingProxy(fhir.baseUrl, () => adapter?.proc.kill('SIGKILL'));
    const port = await freePort();
    const subscription = await subscribeClinic(sim.url, port, { clinic: { timeZone: 'America/New_York', quietHours: { start: '00:00', end: '00:00' } } });
    cleanup = async () => {
      await adapter?.stop('SIGKILL');
      await proxy.close();
      await fhir.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    };
    const env = {
      NODE_ENV: undefined,
      DATABASE_URL: undefined,
      DATABASE_PATH: undefined,
      ADMIN_PORT: undefined,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      DATA_DIR: dir,
      SERVICE_BASE_URL: sim.url,
      SERVICE_API_KEY: subscription.key,
      SERVICE_KEY_ID: subscription.sub.keyId,
      SERVICE_SIGNING_SECRETS: subscription.sub.signingSecret,
      FHIR_BASE_URL: proxy.url,
      FHIR_AUTH: 'none',
      FHIR_APPOINTMENT_BOOKING: 'slot',
      ADMIN_TOKEN: ADMIN,
      PROCESSOR_POLL_MS: '50',
      PROCESSOR_BACKOFF_BASE_MS: '100',
      PROCESSOR_BACKOFF_MAX_MS: '1000',
    };
    const adapterUrl = `http://127.0.0.1:${port}`;
    const admin = <T>(method: 'GET' | 'PUT', path: string, body?: unknown) =>
      json<T>(method, `${adapterUrl}/admin${path}`, body, { authorization: `Bearer ${ADMIN}` });
    adapter = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 30_000 });
    const killed = new Promise<void>((r) => adapter!.proc.once('exit', () => r()));

    const startsAt = clinicTime(3, 10);
    const booked = (
      await json<{ serviceId: string; doctor: { serviceId: string }; location: { serviceId: string }; patient: { serviceId: string } }>(
        'POST',
        `${sim.url}/_sim/appointments`,
        { clinicId: subscription.clinicId, startsAt },
      )
    ).body;
    await waitFor(async () => ((await admin<{ events: unknown[] }>('GET', '/events?state=waiting')).body.events.length ? true : undefined), 20_000);
    await admin('PUT', `/crosswalk/doctor/${booked.doctor.serviceId}`, { emrId: 'pr-1002' });
    await admin('PUT', `/crosswalk/location/${booked.location.serviceId}`, { emrId: 'loc-2002' });
    await killed;

    adapter = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 30_000 });
    await waitFor(async () => {
      const events = (await admin<{ events: { state: string }[] }>('GET', '/events')).body.events;
      return events.length > 0 && events.every((e) => e.state === 'applied') ? true : undefined;
    }, 30_000);

    const search = async (query: string) =>
      ((await (await fetch(`${fhir.baseUrl}/${query}`)).json()) as { entry?: { resource: { slot?: { reference: string }[] } }[] }).entry ?? [];
    const byIdentifier = await search(`Appointment?identifier=${SYSTEM}|${booked.serviceId}`);
    const slotId = `sch-3002-${startsAt.replace(/[-:]/g, '').slice(0, 13)}Z`;
    const inSlot = await search(`Appointment?slot=Slot/${slotId}`);
    expect(byIdentifier).toHaveLength(1);
    expect(inSlot).toHaveLength(1);
    expect(byIdentifier[0]!.resource.slot).toEqual([{ reference: `Slot/${slotId}` }]);
  }, 90_000);
});
