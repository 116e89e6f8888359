// The trace goes on past the adapter: each FHIR call and each call to the service carries the W3C traceparent of
// its own client span, so an EMR (or a service) that traces joins the same trace; with tracing off, none is sent.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { createFhirHttp } from '../../src/emr/fhir/http.ts';
import { silentLogger } from '../../src/logger.ts';
import { createServiceClient } from '../../src/service-client/client.ts';
import { type RunningTracing, startTracing } from '../../src/tracing/provider.ts';
import { DEFAULT_TRACE_TUNING } from '../../src/tracing/tuning.ts';
import { inSpan, SPAN_NAMES } from '../../src/tracing/spans.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts';

/** A server that answers every request with `answer` and keeps the headers it was sent. */
async function recordingServer(answer: { status: number; body: unknown; type: string }) {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(answer.status, { 'content-type': answer.type }).end(JSON.stringify(answer.body)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tracing(): Promise<OtlpReceiver & { tracing: RunningTracing }> {
  const receiver = await startOtlpReceiver();
  const t = startTracing(
    {
      url: `${receiver.url}/v1/traces`,
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'emr-bridge',
      resourceAttributes: {},
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      tuning: DEFAULT_TRACE_TUNING,
    },
    silentLogger(),
  );
  cleanups.push(
    () => receiver.close(),
    () => t.shutdown(),
  );
  return Object.assign(receiver, { tracing: t });
}

describe('traceparent on the calls out', () => {
  it('goes to the EMR with each FHIR call, naming that call; none while tracing is off', async () => {
    const emr = await recordingServer({ status: 201, type: 'application/fhir+json', body: { resourceType: 'Patient', id: '12' } });
    cleanups.push(() => emr.close());
    const http = createFhirHttp({ baseUrl: `${emr.url}/fhir`, timeoutMs: 2000, auth: { mode: 'none' }, clock: systemClock, maxContentBytes: 1024 });
    cleanups.push(() => http.close());
    await http.call('POST', 'Patient', { resourceType: 'Patient' });
    expect(emr.seen[0]).not.toHaveProperty('traceparent');

    const r = await tracing();
    await inSpan(SPAN_NAMES.processEvent, {}, () => http.call('PUT', 'Patient/12?_format=json', { resourceType: 'Patient', id: '12' }));
    await r.tracing.shutdown();
    const call = r.spans.find((s) => s.name === 'FHIR PUT Patient')!;
    expect(call.attributes).toMatchObject({
      'http.request.method': 'PUT',
      'fhir.resource_type': 'Patient',
      'emr_bridge.emr.id': 'Patient/12',
      'http.response.status_code': 201,
    });
    expect(emr.seen[1]?.traceparent).toBe(`00-${call.traceId}-${call.spanId}-01`);
  });

  it('goes to the service with each call, the span named by the route, never an id', async () => {
    const service = await recordingServer({ status: 200, type: 'application/json', body: { ok: true } });
    cleanups.push(() => service.close());
    const client = createServiceClient({ baseUrl: service.url, apiKey: 'sk_live_key', timeoutMs: 2000, clock: systemClock });
    cleanups.push(() => client.close());
    const r = await tracing();
    await inSpan(SPAN_NAMES.mappingPost, {}, () => client.putMapping('patient', 'pat_123', 'Patient/12'));
    await r.tracing.shutdown();
    const call = r.spans.find((s) => s.name === 'service PUT mappings')!;
    expect(call.attributes).toEqual({
      'http.request.method': 'PUT',
      'http.route': '/integration/v1/mappings/{entityType}/{serviceId}',
      'http.response.status_code': 200,
    });
    expect(service.seen[0]?.traceparent).toBe(`00-${call.traceId}-${call.spanId}-01`);
  });
});
