// The span helper every part uses, on the real SDK exporting to the tests' OTLP receiver: off it does nothing and
// registers nothing; on, spans nest as the code runs, cross a stored trace context, carry allowed attributes only,
// fail with a code, and the log lines written inside them carry their ids.
import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { type RunningTracing, startTracing } from '../../src/tracing/provider.ts';
import type { TracingSettings } from '../../src/tracing/settings.ts';
import { DEFAULT_TRACE_TUNING } from '../../src/tracing/tuning.ts';
import {
  addTraceHeaders,
  bindToSpan,
  incomingTraceparent,
  inSpan,
  SPAN_NAMES,
  type SpanAttributes,
  storedContext,
  traceIdOf,
  tracingOn,
} from '../../src/tracing/spans.ts';
import { captureLogger } from '../support/log-capture.ts';
import { type OtlpReceiver, spansAsText, startOtlpReceiver } from '../support/otlp-receiver.ts';

/** The OpenTelemetry API's registry of globals (a provider, a context manager, ...): absent until one registers. */
const API_GLOBALS = Symbol.for('opentelemetry.js.api.1');
const registered = () => Object.keys((globalThis as Record<symbol, object | undefined>)[API_GLOBALS] ?? {}).filter((k) => k !== 'version');

const settingsFor = (receiver: OtlpReceiver, protocol: TracingSettings['protocol'] = 'http/protobuf'): TracingSettings => ({
  url: `${receiver.url}/v1/traces`,
  protocol,
  headers: { 'x-backend-key': 'k-123' },
  serviceName: 'emr-bridge-test',
  resourceAttributes: { 'deployment.environment.name': 'test' },
  sampler: { name: 'parentbased_always_on', ratio: 1 },
  tuning: DEFAULT_TRACE_TUNING,
});

let receiver: OtlpReceiver | undefined;
let running: RunningTracing | undefined;
afterEach(async () => {
  await running?.shutdown();
  running = undefined;
  await receiver?.close();
  receiver = undefined;
});

async function on(protocol: TracingSettings['protocol'] = 'http/protobuf') {
  receiver = await startOtlpReceiver();
  running = startTracing(settingsFor(receiver, protocol), silentLogger());
  return receiver;
}

describe('spans with tracing off', () => {
  it('runs the function as it is, makes and stores nothing, and registers nothing with OpenTelemetry', async () => {
    expect(tracingOn()).toBe(false);
    const promise = Promise.resolve(7);
    expect(inSpan(SPAN_NAMES.processEvent, { 'emr_bridge.event.id': 'e' }, () => promise)).toBe(promise);
    await inSpan(SPAN_NAMES.processEvent, {}, async (span) => {
      span.set({ 'emr_bridge.event.type': 'appointment.created' });
      span.fail(new Error('x'));
      expect(span.stored()).toBeUndefined();
      expect(storedContext()).toBeUndefined();
    });
    const headers: Record<string, string> = {};
    addTraceHeaders(headers);
    expect(headers).toEqual({});
    const fn = () => 1;
    expect(bindToSpan(fn)).toBe(fn);
    expect(incomingTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBeNull();
    expect(registered()).toEqual([]);
  });
});

describe('spans with tracing on', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`nests spans as the code runs and exports them over ${protocol} with the resource and headers given`, async () => {
      const r = await on(protocol);
      await inSpan(SPAN_NAMES.documentScan, {}, async () => {
        await inSpan(SPAN_NAMES.documentFile, { 'emr_bridge.document.external_id': 'doc-1' }, async () => {
          await inSpan('FHIR GET Binary', { 'fhir.resource_type': 'Binary' }, async () => undefined, { kind: 'client' });
        });
      });
      await running!.shutdown();
      const byName = new Map(r.spans.map((s) => [s.name, s]));
      const scan = byName.get('document scan')!;
      const file = byName.get('document file')!;
      const call = byName.get('FHIR GET Binary')!;
      expect(scan.parentSpanId).toBe('');
      expect(file).toMatchObject({ traceId: scan.traceId, parentSpanId: scan.spanId, attributes: { 'emr_bridge.document.external_id': 'doc-1' } });
      expect(call).toMatchObject({ traceId: scan.traceId, parentSpanId: file.spanId, kind: 3, encoding: protocol === 'http/json' ? 'json' : 'protobuf' });
      expect(scan.resource).toMatchObject({ 'service.name': 'emr-bridge-test', 'deployment.environment.name': 'test', 'telemetry.sdk.language': 'nodejs' });
      expect(scan.scope).toBe('emr-bridge');
      expect(r.requests[0]?.headers['x-backend-key']).toBe('k-123');
    });
  }

  it('makes the span of work on a stored row the child of the span that stored it, and starts a new trace for none', async () => {
    const r = await on();
    const stored = await inSpan(SPAN_NAMES.webhook, {}, async (span) => span.stored(), { kind: 'server' });
    expect(stored).toMatch(/^00-[\da-f]{32}-[\da-f]{16}-01$/);
    await inSpan(SPAN_NAMES.processEvent, {}, async () => undefined, { parent: stored!, kind: 'consumer' });
    await inSpan(SPAN_NAMES.mappingPost, {}, async () => undefined, { parent: null });
    await inSpan(SPAN_NAMES.mappingPost, {}, async () => undefined, { parent: 'not a traceparent' });
    await running!.shutdown();
    const receipt = r.spans.find((s) => s.name === 'POST /webhooks/service')!;
    const processing = r.spans.find((s) => s.name === 'event process')!;
    expect(processing).toMatchObject({ traceId: receipt.traceId, parentSpanId: receipt.spanId, kind: 5 });
    expect(traceIdOf(stored)).toBe(receipt.traceId);
    const posts = r.spans.filter((s) => s.name === 'mapping post');
    expect(posts.map((p) => p.parentSpanId)).toEqual(['', '']);
    expect(new Set(posts.map((p) => p.traceId)).size).toBe(2);
  });

  it('follows a valid incoming traceparent, ignores a malformed one, and sends the active one on', async () => {
    const r = await on();
    const incoming = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(incomingTraceparent(incoming)).toBe(incoming);
    expect(incomingTraceparent('00-xyz')).toBeNull();
    expect(incomingTraceparent(undefined)).toBeNull();
    let sent: Record<string, string> = {};
    await inSpan(
      SPAN_NAMES.webhook,
      {},
      async () => {
        await inSpan('FHIR POST Patient', {}, async () => {
          sent = {};
          addTraceHeaders(sent);
        });
      },
      { parent: incomingTraceparent(incoming), kind: 'server' },
    );
    await running!.shutdown();
    const receipt = r.spans.find((s) => s.name === 'POST /webhooks/service')!;
    const call = r.spans.find((s) => s.name === 'FHIR POST Patient')!;
    expect(receipt).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331' });
    expect(sent.traceparent).toBe(`00-${call.traceId}-${call.spanId}-01`);
  });

  it('keeps allowed attributes only, replaces text that is no identifier, and fails a span with its code, never its message', async () => {
    const r = await on();
    const given = {
      'emr_bridge.event.id': 'evt-1',
      'emr_bridge.service_id': 'Jane Marker Doe',
      'patient.name': 'Jane Marker Doe',
      'http.request.body': '{"phone":"+15550009999"}',
    } as SpanAttributes;
    await expect(
      inSpan(SPAN_NAMES.processEvent, given, async () => {
        throw Object.assign(new Error('the EMR refused Patient Jane Marker Doe'), { code: 'emr_rejected' });
      }),
    ).rejects.toThrow('refused');
    await inSpan(SPAN_NAMES.mappingPost, {}, async (span) => span.fail(new TypeError('no code here')));
    await running!.shutdown();
    const failed = r.spans.find((s) => s.name === 'event process')!;
    expect(failed.attributes).toEqual({ 'emr_bridge.event.id': 'evt-1', 'emr_bridge.service_id': '[refused]', 'emr_bridge.error.code': 'emr_rejected' });
    expect(failed.status).toEqual({ code: 2, message: 'emr_rejected' });
    expect(spansAsText(r.spans)).not.toContain('Marker');
    expect(r.spans.find((s) => s.name === 'mapping post')!.status).toEqual({ code: 2, message: 'TypeError' });
  });

  it("writes the active span's ids on log lines inside it, and on a callback bound to it run later; none outside", async () => {
    const r = await on();
    const { logger, lines } = captureLogger('info');
    let later: () => void = () => undefined;
    await inSpan(SPAN_NAMES.processEvent, {}, async () => {
      logger.info('inside');
      later = bindToSpan(() => logger.info('after the commit'));
    });
    logger.info('outside');
    later();
    await running!.shutdown();
    const span = r.spans.find((s) => s.name === 'event process')!;
    const byMsg = new Map(lines().map((l) => [l.msg, l]));
    expect(byMsg.get('inside')).toMatchObject({ trace_id: span.traceId, span_id: span.spanId });
    expect(byMsg.get('after the commit')).toMatchObject({ trace_id: span.traceId, span_id: span.spanId });
    expect(byMsg.get('outside')).not.toHaveProperty('trace_id');
  });

  it('exports what is queued on shutdown, then makes no span and unregisters everything', async () => {
    const r = await on();
    expect(registered().sort()).toEqual(['context', 'diag', 'trace']);
    for (let i = 0; i < 50; i++) await inSpan(SPAN_NAMES.processEvent, { 'emr_bridge.event.attempt': i + 1 }, async () => undefined);
    await running!.shutdown();
    expect(r.spans.filter((s) => s.name === 'event process')).toHaveLength(50);
    expect(tracingOn()).toBe(false);
    expect(registered()).toEqual([]);
    expect(trace.getActiveSpan()).toBeUndefined();
    expect(context.active()).toBeDefined();
  });

  it('refuses a second start in one process while the first runs', async () => {
    const r = await on();
    expect(() => startTracing(settingsFor(r), silentLogger())).toThrow(/already running in this process/);
  });

  it('logs a collector that refuses, once, and goes on', async () => {
    receiver = await startOtlpReceiver();
    const { logger, lines } = captureLogger('warn');
    running = startTracing({ ...settingsFor(receiver), url: `${receiver.url}/nowhere` }, logger);
    await inSpan(SPAN_NAMES.processEvent, {}, async () => undefined);
    await inSpan(SPAN_NAMES.processEvent, {}, async () => undefined);
    await running.shutdown();
    const warnings = lines().filter((l) => l.msg === 'trace export failed');
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings)).not.toContain('k-123');
  });
});
