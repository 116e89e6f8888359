// The EMR check at start-up and what follows from it: an EMR that answers and is not FHIR R4 stops the
// adapter with the reason; one that does not answer yet is an outage the adapter starts through; a FHIR
// server that does not declare conditional create still gets one record per serviceId under concurrency (its
// records claimed one by one); transactions are used only where the transaction interaction and conditional
// create for every claimed type are both declared.
import { emrSettings } from '../../../src/emr/settings.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/clock.ts';
import { parseConfig } from '../../../src/config.ts';
import { loadFhirAuthSettings } from '../../../src/emr/fhir/auth/index.ts';
import { CLAIMED_TYPES, readCapabilities } from '../../../src/emr/fhir/capabilities.ts';
import { createFhirEmr } from '../../../src/emr/fhir/index.ts';
import { startFhirServer, type RunningFhirServer } from '../../../src/fhir-server/server.ts';
import { silentLogger } from '../../../src/logger.ts';
import { startAdapter } from '../../../src/runtime/adapter.ts';
import { EmrStartupError } from '../../../src/runtime/emr-check.ts';
import { createFhirReader, registerAdapterClient, smartSettings } from '../../support/fhir-client.ts';
import { captureLogger } from '../../support/log-capture.ts';
import { applyThrough, appointmentEvent, processorFixture } from '../../support/processor-fixture.ts';
import { freePort, json } from '../../support/stack.ts';
import { waitFor } from '../../support/wait.ts';
import { quietAdapterConfig } from '../../support/quiet-adapter.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-capabilities-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A server that answers /metadata with this CapabilityStatement and 404 to everything else. */
async function metadataServer(statement: Record<string, unknown>): Promise<string> {
  const server: Server = createServer((req, res) => {
    res.writeHead(req.url?.startsWith('/metadata') ? 200 : 404, { 'content-type': 'application/fhir+json' });
    res.end(JSON.stringify(req.url?.startsWith('/metadata') ? statement : { resourceType: 'OperationOutcome' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Settings for an adapter beside a real (here: stand-in) service and the given EMR. */
const adapterSettings = (dir: string, fhirBaseUrl: string, extra: Record<string, string> = {}) =>
  quietAdapterConfig(dir, 'capabilities-admin-token', { FHIR_BASE_URL: fhirBaseUrl, ...extra });

describe('the EMR check at start-up', () => {
  it('stops start-up with the reason when the EMR answers and is not FHIR R4', async () => {
    const base = await metadataServer({ resourceType: 'CapabilityStatement', status: 'active', fhirVersion: '3.0.2' });
    const err = await startAdapter({ config: adapterSettings(tempDir(), base), logger: silentLogger() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmrStartupError);
    expect((err as Error).message).toMatch(/FHIR 3\.0\.2.*FHIR R4/);
  });

  it('stops start-up when FHIR_BASE_URL/metadata is not a CapabilityStatement', async () => {
    const base = await metadataServer({ hello: 'world' });
    const err = await startAdapter({ config: adapterSettings(tempDir(), base), logger: silentLogger() }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('not a FHIR CapabilityStatement');
  });

  it('stops start-up when FHIR_BASE_URL answers /metadata with 404: not a FHIR base address', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not found</h1>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/wrong`;
    const err = await startAdapter({ config: adapterSettings(tempDir(), base), logger: silentLogger() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmrStartupError);
    expect((err as Error).message).toContain('FHIR_BASE_URL/metadata answered 404');
  });

  it('starts through an EMR that does not answer yet, says so in /admin/status, and turns ok once it answers', async () => {
    const port = await freePort();
    const dir = tempDir();
    const adapter = await startAdapter({ config: adapterSettings(dir, `http://127.0.0.1:${port}`), logger: silentLogger() });
    cleanups.push(() => adapter.close());
    const status = async () =>
      (
        await json<{ components: { name: string; ok: boolean; reason: string | null }[] }>('GET', `${adapter.url}/admin/status`, undefined, {
          authorization: 'Bearer capabilities-admin-token',
        })
      ).body.components.find((c) => c.name === 'emr')!;
    expect(await status()).toMatchObject({ ok: false, reason: expect.stringContaining('emr_unavailable') });
    expect((await fetch(`${adapter.url}/healthz`)).status).toBe(200);

    const fhir = await startFhirServer({ logger: silentLogger(), port });
    cleanups.push(() => fhir.close());
    await waitFor(async () => (await status()).ok, 15_000, 200);
  }, 30_000);
});

describe('what the client reads of transactions', () => {
  const statement = (o: { interaction?: string[]; conditional?: readonly string[]; mode?: string }) => ({
    resourceType: 'CapabilityStatement',
    fhirVersion: '4.0.1',
    rest: [
      {
        mode: o.mode ?? 'server',
        ...(o.interaction ? { interaction: o.interaction.map((code) => ({ code })) } : {}),
        resource: CLAIMED_TYPES.map((type) => ({ type, conditionalCreate: (o.conditional ?? CLAIMED_TYPES).includes(type) })),
      },
    ],
  });

  it('uses transactions where the server declares the transaction interaction and conditional create for every claimed type', () => {
    expect(readCapabilities(statement({ interaction: ['transaction', 'batch'] })).transactions()).toBe(true);
    expect(readCapabilities(statement({ interaction: ['transaction'] })).transactions()).toBe(true);
  });

  it('claims one by one where the transaction interaction is missing, only batch is declared, or a claimed type lacks conditional create', () => {
    expect(readCapabilities(statement({})).transactions()).toBe(false);
    expect(readCapabilities(statement({ interaction: ['batch'] })).transactions()).toBe(false);
    expect(readCapabilities(statement({ interaction: ['transaction'], conditional: ['Patient', 'Practitioner', 'Location'] })).transactions()).toBe(false);
    expect(readCapabilities(statement({ interaction: ['transaction'], mode: 'client' })).transactions()).toBe(false);
  });

  it("reads the bundled FHIR server's statement: transactions unless turned off, or conditional create is", async () => {
    const read = async (opts: { transactions?: boolean; conditionalCreate?: boolean }) => {
      const server = await startFhirServer({ logger: silentLogger(), ...opts });
      cleanups.push(() => server.close());
      return readCapabilities(await (await fetch(`${server.baseUrl}/metadata`)).json()).transactions();
    };
    expect(await read({})).toBe(true);
    expect(await read({ transactions: false })).toBe(false);
    expect(await read({ conditionalCreate: false })).toBe(false);
  });
});

describe('a FHIR server without conditional create', () => {
  let fhir: RunningFhirServer;

  it('still gets exactly one record per serviceId from concurrent events', async () => {
    const dir = tempDir();
    fhir = await startFhirServer({ logger: silentLogger(), auth: {}, conditionalCreate: false });
    cleanups.push(() => fhir.close());
    await registerAdapterClient(fhir, dir);
    const log = captureLogger('warn');
    const config = parseConfig({ SERVICE_BASE_URL: 'bundled', FHIR_BASE_URL: fhir.baseUrl, ...smartSettings(dir) });
    const fhirEmr = createFhirEmr({
      baseUrl: fhir.baseUrl,
      identifierSystem: emrSettings(config.emr, 'fhir').identifierSystem,
      timeoutMs: 5_000,
      labReportTypeCodes: emrSettings(config.emr, 'fhir').labReportTypeCodes,
      prescriptionTypeCodes: emrSettings(config.emr, 'fhir').prescriptionTypeCodes,
      auth: await loadFhirAuthSettings(emrSettings(config.emr, 'fhir').auth),
      maxContentBytes: 1024 * 1024,
      clock: createManualClock(Date.now()),
      logger: log.logger,
    });
    cleanups.push(() => fhirEmr.close());

    // The processor's own fixture, with the real FHIR adapter in place of the in-memory EMR.
    const f = processorFixture({ PROCESSOR_CONCURRENCY: '8' });
    f.clock.set(Date.now());
    // claimAppointment too: it answers undefined here (no conditional create, so no transactions), and the records go one by one.
    applyThrough(f.emr, fhirEmr);
    for (let i = 0; i < 8; i++) {
      const e = appointmentEvent({ serviceId: `apt_${i}` });
      e.patient = { ...(e.patient as object), serviceId: 'pat_shared' };
      f.store(e);
    }
    expect(await f.processor.runOnce()).toBe(8);

    const reader = await createFhirReader(fhir.baseUrl, () => fhir);
    cleanups.push(() => reader.close());
    const count = async (query: string) => ((await reader.call<{ entry?: unknown[] }>('GET', query)).body.entry ?? []).length;
    expect(await count('Patient?identifier=urn:emr-bridge:service|pat_shared')).toBe(1);
    expect(await count('Practitioner?identifier=urn:emr-bridge:service|doc_1')).toBe(1);
    expect(await count('Location?identifier=urn:emr-bridge:service|loc_1')).toBe(1);
    expect(await count('Appointment?_count=50')).toBe(8);
    // A claim repeated after a crash (the mapping row lost, the record made) finds the record: search, not create.
    const again = await fhirEmr.ensurePractitioner({ serviceId: 'doc_1', name: 'Dr Repeat' });
    expect(again.created).toBe(false);
    expect(await count('Practitioner?identifier=urn:emr-bridge:service|doc_1')).toBe(1);
    // Said once, not once per claim.
    expect(log.lines().filter((l) => String(l.msg).includes('does not declare conditional create'))).toHaveLength(1);
  });
});
