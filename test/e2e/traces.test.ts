// End to end, traces (issue 25): the adapter exports to an OTLP/HTTP receiver in this process (./support's, which
// decodes protobuf and JSON), and one appointment's trace runs from the webhook's receipt to the processing, each
// FHIR call in it and each mapping posted back, with the adapter restarted between the receipt and the processing
// (the processing is the receipt's child through the trace context stored with the inbox row). One document's
// trace runs from the EMR scan to its final status written back to the EMR.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { emrPatient, labReportDocument } from '../support/fhir-builders.ts';
import { createFhirReader, registerAdapterClient, smartSettings } from '../support/fhir-client.ts';
import { startHl7Stack } from '../support/hl7-stack.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { ADMIN, freePort, json, startStack, type Stack, subscribeClinic } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };

/** The spans of one trace, and the children of a span in it. */
const inTrace = (spans: readonly ReceivedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);
const childrenOf = (spans: readonly ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);

/**
 * The simulator, the FHIR server (SMART sign-in on) and an adapter exporting traces to `receiver`, which can be
 * stopped and started again on the same data folder and port, as a restart of the process would.
 */
async function tracedStack(receiver: OtlpReceiver, protocol: 'http/protobuf' | 'http/json') {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-e2e-traces-'));
  const sim = await startSimulatorServer({ logger: silentLogger() });
  const fhirFile = join(dir, 'fhir.jsonl');
  const startFhirOn = async (port = 0) => {
    const server = await startFhirServer({ logger: silentLogger(), dataFile: fhirFile, port, auth: {} });
    await registerAdapterClient(server, dir);
    return server;
  };
  let fhir: RunningFhirServer | undefined = await startFhirOn();
  const fhirPort = fhir.port;
  const reader = await createFhirReader(`http://127.0.0.1:${fhirPort}`, () => fhir);
  const port = await freePort();
  const { clinicId, key, sub } = await subscribeClinic(sim.url, port, { clinic: NO_QUIET_HOURS });
  const clock: Clock = { now: () => systemClock.now() + sim.simulator.clock.offsetMs() };
  const env = {
    PORT: String(port),
    DATA_DIR: dir,
    SERVICE_BASE_URL: sim.url,
    SERVICE_API_KEY: key,
    SERVICE_KEY_ID: sub.keyId,
    SERVICE_SIGNING_SECRETS: sub.signingSecret,
    FHIR_BASE_URL: fhir.baseUrl,
    ...smartSettings(dir),
    ADMIN_TOKEN: ADMIN,
    PROCESSOR_POLL_MS: '50',
    PROCESSOR_BACKOFF_BASE_MS: '100',
    PROCESSOR_BACKOFF_MAX_MS: '500',
    PUSHER_SCAN_CRON: '0 0 1 1 *',
    FHIR_TIMEOUT_MS: '2000',
    SERVICE_TIMEOUT_MS: '2000',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  };
  let adapter: RunningAdapter | undefined;
  const s = {
    dir,
    sim,
    clinicId,
    /** Starts the adapter; `instance` names this run of it in the spans' resource (service.instance.id). */
    async startAdapter(instance: string) {
      const config = parseConfig({ ...env, OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance},deployment.environment.name=test` });
      adapter = await startAdapter({ config, logger: silentLogger(), clock });
      return adapter;
    },
    async stopAdapter() {
      await adapter?.close();
      adapter = undefined;
    },
    async stopFhir() {
      await fhir?.close();
      fhir = undefined;
    },
    async startFhir() {
      fhir = await startFhirOn(fhirPort);
    },
    simPost: <T>(path: string, body: unknown = {}) => json<T>('POST', `${sim.url}${path}`, body),
    async close() {
      await adapter?.close();
      await sim.close();
      await fhir?.close();
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => s.close());
  return s;
}

describe('traces, end to end', () => {
  it.each(['http/protobuf', 'http/json'] as const)(
    "follows one appointment from the webhook's receipt to the EMR calls and the mappings posted back, across a restart (%s)",
    async (protocol) => {
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const s = await tracedStack(receiver, protocol);

      // The first run receives the webhooks; the EMR is down, so the processing cannot apply them.
      await s.stopFhir();
      await s.startAdapter('first');
      const created = (await s.simPost<{ serviceId: string }>('/_sim/appointments', { clinicId: s.clinicId })).body;
      const receiptOf = (spans: readonly ReceivedSpan[]) =>
        spans.find((x) => x.name === 'POST /webhooks/service' && x.attributes['emr_bridge.event.type'] === 'appointment.created');
      const tried = await receiver.waitFor(
        (spans) => {
          const r = receiptOf(spans);
          return r !== undefined && spans.some((x) => x.name === 'event process' && x.parentSpanId === r.spanId);
        },
        20_000,
        "the receipt and a first attempt at the appointment's event",
      );
      await s.stopAdapter();
      const receipt = receiptOf(tried)!;
      const eventId = receipt.attributes['emr_bridge.event.id'] as string;

      // The second run, on the same data, with the EMR back: the event is applied and its mappings posted.
      await s.startFhir();
      await s.startAdapter('second');
      await receiver.waitFor(
        (spans) =>
          spans.some(
            (x) => x.name === 'event process' && x.attributes['emr_bridge.event.id'] === eventId && x.attributes['emr_bridge.event.outcome'] === 'applied',
          ) && spans.some((x) => x.name === 'mapping post' && x.attributes['emr_bridge.entity.type'] === 'appointment'),
        20_000,
        'the event applied and its appointment mapping posted',
      );
      await s.stopAdapter();
      const spans = inTrace(receiver.spans, receipt.traceId);

      // The receipt: a server span (the simulator sends no traceparent: the trace starts here), in the first run.
      expect(receipt).toMatchObject({
        parentSpanId: '',
        kind: 2,
        encoding: protocol === 'http/json' ? 'json' : 'protobuf',
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/webhooks/service',
          'http.response.status_code': 200,
          'emr_bridge.verification': 'valid',
          'emr_bridge.event.id': eventId,
        },
        resource: { 'service.name': 'emr-bridge', 'service.instance.id': 'first', 'deployment.environment.name': 'test' },
      });
      expect(receipt.events.map((e) => e.name)).toEqual(['inbox commit']);
      // A first delivery is not said to be one: only a duplicate carries emr_bridge.event.duplicate.
      expect(receipt.attributes).not.toHaveProperty('emr_bridge.event.duplicate');
      // Its trace context went with the inbox row.
      const db = new Database(join(s.dir, 'emr-bridge.db'), { readonly: true });
      const stored = db.prepare('SELECT trace_context FROM inbox_events WHERE event_id = ?').pluck().get(eventId) as string;
      db.close();
      expect(stored).toBe(`00-${receipt.traceId}-${receipt.spanId}-01`);

      // Every attempt at the event is the receipt's child: the failed one of the first run, the applied one of the second.
      const attempts = spans.filter((x) => x.name === 'event process' && x.attributes['emr_bridge.event.id'] === eventId);
      expect(attempts.every((x) => x.parentSpanId === receipt.spanId && x.kind === 5)).toBe(true);
      const failed = attempts.find((x) => x.resource['service.instance.id'] === 'first')!;
      expect(failed.attributes['emr_bridge.event.outcome']).toMatch(/^(retry|wait)$/);
      expect(failed.status.code).toBe(2);
      const applied = attempts.find((x) => x.attributes['emr_bridge.event.outcome'] === 'applied')!;
      expect(applied.resource['service.instance.id']).toBe('second');
      expect(applied.attributes).toMatchObject({
        'emr_bridge.event.type': 'appointment.created',
        'emr_bridge.service_id': created.serviceId,
      });

      // Each FHIR call of the applied attempt is its child: method, resource type, status. The appointment, its doctor
      // and location (and its patient, unless the patient.created event the simulator sent first made it, in a trace
      // of its own) are claimed in one call: a transaction Bundle posted to the base.
      const calls = childrenOf(spans, applied).filter((x) => x.name.startsWith('FHIR '));
      expect(calls.filter((x) => x.name.startsWith('FHIR POST')).map((x) => x.name)).toEqual(['FHIR POST base']);
      for (const c of calls) {
        expect(c.kind).toBe(3);
        expect(c.attributes['http.request.method']).toBe(c.name.split(' ')[1]);
        if (c.name !== 'FHIR POST base') expect(c.attributes['fhir.resource_type']).toBe(c.name.split(' ')[2]);
        expect(c.attributes['http.response.status_code']).toBeGreaterThanOrEqual(200);
      }
      const transaction = calls.find((x) => x.name === 'FHIR POST base')!;
      expect(transaction.attributes['http.response.status_code']).toBe(200);

      // The mappings posted back are the applied attempt's children, each with its call to the service.
      const posts = childrenOf(spans, applied).filter((x) => x.name === 'mapping post');
      const mapped = posts.map((p) => p.attributes['emr_bridge.entity.type']);
      for (const entityType of ['appointment', 'doctor', 'location']) expect(mapped).toContain(entityType);
      for (const post of posts) {
        expect(post.attributes['emr_bridge.emr.id']).toMatch(/^[A-Za-z]+\/[\w-]+$|^[\w-]+$/);
        const put = childrenOf(spans, post);
        expect(put.map((x) => [x.name, x.attributes['http.route'], x.attributes['http.response.status_code']])).toEqual([
          ['service PUT mappings', '/integration/v1/mappings/{entityType}/{serviceId}', 200],
        ]);
      }
    },
    60_000,
  );
});

describe('an HL7 v2 EMR in the trace', () => {
  it("gives each message the processing sends a span of its own: its type, MSH-10 and the EMR's acknowledgment", async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const h = await startHl7Stack({ clinic: NO_QUIET_HOURS, settings: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    cleanups.push(() => h.close());
    const created = (await h.simPost<{ serviceId: string }>('/_sim/appointments', { clinicId: h.clinicId })).body;
    const isApplied = (x: ReceivedSpan) =>
      x.name === 'event process' && x.attributes['emr_bridge.service_id'] === created.serviceId && x.attributes['emr_bridge.event.outcome'] === 'applied';
    await receiver.waitFor((spans) => spans.some((x) => x.name === 'HL7 SIU^S12' && spans.some((p) => isApplied(p) && p.spanId === x.parentSpanId)), 20_000);
    const applied = receiver.spans.find(isApplied)!;
    const receipt = receiver.spans.find((x) => x.spanId === applied.parentSpanId)!;
    expect(receipt).toMatchObject({ name: 'POST /webhooks/service', traceId: applied.traceId });
    const messages = childrenOf(receiver.spans, applied).filter((x) => x.name.startsWith('HL7 '));
    const siu = messages.find((x) => x.name === 'HL7 SIU^S12')!;
    expect(siu).toMatchObject({ kind: 3, status: { code: 0 }, attributes: { 'hl7.message_type': 'SIU^S12', 'hl7.ack_code': 'AA' } });
    expect(siu.attributes['hl7.message_control_id']).toMatch(/^[\w-]{20}$/);
    for (const m of messages) expect(m.attributes['hl7.ack_code']).toMatch(/^[AC]A$/);
  }, 30_000);
});

describe("a document's trace, end to end", () => {
  let st: Stack | undefined;
  afterEach(async () => {
    await st?.close();
    st = undefined;
  });

  it('runs from the scan that found it to its send, and its status written back to the EMR', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    st = await startStack({
      clinic: NO_QUIET_HOURS,
      settings: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PUSHER_SCAN_CRON: '* * * * * *' },
    });
    const patient = await st.fhirCreate(emrPatient('+15550307788'));
    const documentId = (await st.fhirCreate(labReportDocument(patient.id, 'Full blood count'))).id;
    const spans = await receiver.waitFor(
      (all) => all.some((x) => x.name === 'document write-back' && x.attributes['emr_bridge.document.external_id'] === documentId),
      30_000,
      "the document's status written back",
    );
    await st.close();
    st = undefined;
    const all = receiver.spans;

    const filed = all.find((x) => x.name === 'document file' && x.attributes['emr_bridge.document.external_id'] === documentId)!;
    expect(filed.attributes).toMatchObject({
      'emr_bridge.document.type': 'lab_report',
      'emr_bridge.document.source': 'emr',
      'emr_bridge.document.emr_id': documentId,
      'emr_bridge.document.status': 'queued',
    });
    const trace = inTrace(all, filed.traceId);
    const scan = trace.find((x) => x.spanId === filed.parentSpanId)!;
    expect(scan).toMatchObject({ name: 'document scan', parentSpanId: '', attributes: { 'emr_bridge.scan.filed': 1 } });
    expect(childrenOf(trace, scan).map((x) => x.name)).toContain('FHIR GET DocumentReference');

    // Every later step of the document is the filing's child, and names the document.
    const steps = childrenOf(trace, filed);
    const send = steps.find((x) => x.name === 'document send')!;
    expect(send.attributes).toMatchObject({
      'emr_bridge.document.external_id': documentId,
      'emr_bridge.document.attempt': 1,
      'emr_bridge.document.status': 'SENT',
    });
    expect(childrenOf(trace, send).map((x) => [x.name, x.attributes['http.route'], x.attributes['http.response.status_code']])).toEqual([
      ['service POST lab-reports', '/integration/v1/lab-reports', 201],
    ]);
    const writeBacks = steps.filter((x) => x.name === 'document write-back');
    expect(writeBacks.map((x) => x.attributes['emr_bridge.document.status'])).toContain('SENT');
    const final = writeBacks.find((x) => x.attributes['emr_bridge.document.status'] === 'SENT')!;
    expect(final.status.code).toBe(0);
    // The outcome's Communication: created by the first write-back, changed by its id after (never a conditional update).
    expect(childrenOf(trace, final).map((x) => x.name)).toContainEqual(expect.stringMatching(/^FHIR (POST|PUT) Communication$/));
    for (const step of steps) expect(step.attributes['emr_bridge.document.external_id']).toBe(documentId);
    expect(spans.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('with no endpoint set', () => {
  it('makes no span, registers nothing with OpenTelemetry and stores no trace context', async () => {
    const z = await startZeroConfigAdapter();
    cleanups.push(() => z.close());
    const made = await json<{ serviceId: string }>('POST', `${z.adapter.serviceUrl}/_sim/appointments`, { clinicId: z.adapter.clinicId });
    expect(made.status).toBe(201);
    const db = new Database(join(z.dir, 'emr-bridge.db'), { readonly: true });
    cleanups.push(() => db.close());
    await waitFor(
      () =>
        (db.prepare("SELECT count(*) FROM mapping_outbox WHERE service_id = ? AND state = 'sent'").pluck().get(made.body.serviceId) as number) === 1 ||
        undefined,
      20_000,
    );
    const traced = (table: string) => db.prepare(`SELECT count(*) FROM ${table} WHERE trace_context IS NOT NULL`).pluck().get();
    expect(db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBeGreaterThanOrEqual(2);
    expect([traced('inbox_events'), traced('mapping_outbox'), traced('outbox_documents')]).toEqual([0, 0, 0]);
    const globals = (globalThis as Record<symbol, object | undefined>)[Symbol.for('opentelemetry.js.api.1')];
    expect(Object.keys(globals ?? {}).filter((k) => k !== 'version')).toEqual([]);
  }, 30_000);
});
