// The tests' OTLP receiver reads what the exporters send: the same spans, serialized by the OpenTelemetry
// serializers the exporters use (protobuf and JSON), decode to the same thing, and to what the spans were.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { decodeTraces } from '../support/otlp-receiver.ts';

function someSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'emr-bridge-test', 'deployment.environment.name': 'test' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('emr-bridge');
  const root = tracer.startSpan('POST /webhooks/service', {
    kind: SpanKind.SERVER,
    attributes: { 'emr_bridge.event.id': 'evt-1', 'http.response.status_code': 200 },
  });
  const ctx = (api: typeof import('@opentelemetry/api')) => api.trace.setSpan(api.ROOT_CONTEXT, root);
  return { exporter, provider, tracer, root, ctx };
}

describe('the OTLP receiver of the tests', () => {
  it('decodes protobuf and JSON exports of the same spans to the same spans, as they were made', async () => {
    const api = await import('@opentelemetry/api');
    const { exporter, provider, tracer, root, ctx } = someSpans();
    const child = tracer.startSpan(
      'FHIR POST Patient',
      { kind: SpanKind.CLIENT, attributes: { 'emr_bridge.duplicate': false, 'emr_bridge.n': 2.5 } },
      ctx(api),
    );
    child.addEvent('retried', { 'emr_bridge.attempt': 2 });
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'emr_unavailable' });
    child.end();
    root.end();
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);

    const fromProtobuf = decodeTraces('application/x-protobuf', Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!));
    const fromJson = decodeTraces('application/json', Buffer.from(JsonTraceSerializer.serializeRequest(spans)!));
    const plain = (xs: typeof fromJson) => xs.map(({ encoding: _e, ...s }) => s);
    expect(plain(fromProtobuf)).toEqual(plain(fromJson));

    const byName = new Map(fromProtobuf.map((s) => [s.name, s]));
    const r = byName.get('POST /webhooks/service')!;
    const c = byName.get('FHIR POST Patient')!;
    expect(r).toMatchObject({
      traceId: root.spanContext().traceId,
      spanId: root.spanContext().spanId,
      parentSpanId: '',
      kind: 2,
      attributes: { 'emr_bridge.event.id': 'evt-1', 'http.response.status_code': 200 },
      resource: { 'service.name': 'emr-bridge-test', 'deployment.environment.name': 'test' },
      scope: 'emr-bridge',
    });
    expect(c).toMatchObject({
      traceId: root.spanContext().traceId,
      spanId: child.spanContext().spanId,
      parentSpanId: root.spanContext().spanId,
      kind: 3,
      attributes: { 'emr_bridge.duplicate': false, 'emr_bridge.n': 2.5 },
      events: [{ name: 'retried', attributes: { 'emr_bridge.attempt': 2 } }],
      status: { code: 2, message: 'emr_unavailable' },
    });
    await provider.shutdown();
  });
});
