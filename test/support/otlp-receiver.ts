// An OTLP/HTTP trace receiver in this process, on loopback: what a collector's otlp receiver (protocols: http)
// does with POST /v1/traces, protobuf (decoded with protobufjs from the OTLP trace schema of
// bench/support/otlp-trace-schema.ts, field numbers as in opentelemetry-proto) or JSON (OTLP/JSON: hex ids, lowerCamelCase keys). Every span becomes one plain
// shape, whichever encoding it came in (gzip-compressed or not), for the tests to read. Over https when given a
// certificate (asking the client for one of its own when given a CA too); `hold` keeps every request unanswered,
// as a collector that hangs would.
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { ExportTraceServiceRequest } from '../../bench/support/otlp-trace-schema.ts';

export type AttributeValue = string | number | boolean | AttributeValue[] | null;

/** One span as received, whatever its encoding. Ids are lowercase hex; parentSpanId is '' for a root span. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startNs: bigint;
  attributes: Record<string, AttributeValue>;
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, AttributeValue>;
  scope: string;
  /** How it came: 'protobuf' or 'json'. */
  encoding: 'protobuf' | 'json';
}

export interface ReceivedRequest {
  contentType: string;
  /** The request's bytes as they came (a test scans them for what must not be there). */
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
  spans: number;
}

// protobufjs objects, decoded with keepCase (snake_case keys, as in the schema).
interface PbAnyValue {
  string_value?: string;
  bool_value?: boolean;
  int_value?: { toString(): string } | number;
  double_value?: number;
  array_value?: { values?: PbAnyValue[] };
  bytes_value?: Uint8Array;
}
interface PbKeyValue {
  key: string;
  value?: PbAnyValue;
}

function pbValue(v: PbAnyValue | undefined): AttributeValue {
  if (!v) return null;
  if (v.string_value !== undefined) return v.string_value;
  if (v.bool_value !== undefined) return v.bool_value;
  if (v.int_value !== undefined) return Number(v.int_value.toString());
  if (v.double_value !== undefined) return v.double_value;
  if (v.array_value !== undefined) return (v.array_value.values ?? []).map(pbValue);
  if (v.bytes_value !== undefined) return Buffer.from(v.bytes_value).toString('hex');
  return null;
}
const pbAttributes = (kvs: PbKeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, pbValue(kv.value)]));
const hex = (b: Uint8Array | undefined) => (b ? Buffer.from(b).toString('hex') : '');

function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const req = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { defaults: false }) as {
    resource_spans?: {
      resource?: { attributes?: PbKeyValue[] };
      scope_spans?: {
        scope?: { name?: string };
        spans?: {
          trace_id?: Uint8Array;
          span_id?: Uint8Array;
          parent_span_id?: Uint8Array;
          name?: string;
          kind?: number;
          start_time_unix_nano?: { toString(): string } | number;
          attributes?: PbKeyValue[];
          events?: { name?: string; attributes?: PbKeyValue[] }[];
          links?: { trace_id?: Uint8Array; span_id?: Uint8Array }[];
          status?: { code?: number; message?: string };
        }[];
      }[];
    }[];
  };
  return (req.resource_spans ?? []).flatMap((rs) =>
    (rs.scope_spans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: hex(s.trace_id),
        spanId: hex(s.span_id),
        parentSpanId: hex(s.parent_span_id),
        name: s.name ?? '',
        kind: s.kind ?? 0,
        startNs: BigInt((s.start_time_unix_nano ?? 0).toString()),
        attributes: pbAttributes(s.attributes),
        events: (s.events ?? []).map((e) => ({ name: e.name ?? '', attributes: pbAttributes(e.attributes) })),
        links: (s.links ?? []).map((l) => ({ traceId: hex(l.trace_id), spanId: hex(l.span_id) })),
        status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        resource: pbAttributes(rs.resource?.attributes),
        scope: ss.scope?.name ?? '',
        encoding: 'protobuf' as const,
      })),
    ),
  );
}

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
  bytesValue?: string;
}
interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}

function jsonValue(v: JsonAnyValue | undefined): AttributeValue {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(jsonValue);
  if (v.bytesValue !== undefined) return Buffer.from(v.bytesValue, 'base64').toString('hex');
  return null;
}
const jsonAttributes = (kvs: JsonKeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function decodeJson(body: Buffer): ReceivedSpan[] {
  const req = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: {
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: {
        scope?: { name?: string };
        spans?: {
          traceId?: string;
          spanId?: string;
          parentSpanId?: string;
          name?: string;
          kind?: number;
          startTimeUnixNano?: string | number;
          attributes?: JsonKeyValue[];
          events?: { name?: string; attributes?: JsonKeyValue[] }[];
          links?: { traceId?: string; spanId?: string }[];
          status?: { code?: number; message?: string };
        }[];
      }[];
    }[];
  };
  return (req.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: (s.traceId ?? '').toLowerCase(),
        spanId: (s.spanId ?? '').toLowerCase(),
        parentSpanId: (s.parentSpanId ?? '').toLowerCase(),
        name: s.name ?? '',
        kind: s.kind ?? 0,
        startNs: BigInt(s.startTimeUnixNano ?? 0),
        attributes: jsonAttributes(s.attributes),
        events: (s.events ?? []).map((e) => ({ name: e.name ?? '', attributes: jsonAttributes(e.attributes) })),
        links: (s.links ?? []).map((l) => ({ traceId: (l.traceId ?? '').toLowerCase(), spanId: (l.spanId ?? '').toLowerCase() })),
        status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        resource: jsonAttributes(rs.resource?.attributes),
        scope: ss.scope?.name ?? '',
        encoding: 'json' as const,
      })),
    ),
  );
}

/** Decodes one export request's body by its content type: OTLP protobuf or OTLP/JSON. */
export function decodeTraces(contentType: string, body: Buffer): ReceivedSpan[] {
  if (contentType.startsWith('application/x-protobuf')) return decodeProtobuf(body);
  if (contentType.startsWith('application/json')) return decodeJson(body);
  throw new Error(`not an OTLP content type: ${contentType}`);
}

/** Everything the spans hold (names, attributes, events, status, resource), as one text to search for markers. */
export const spansAsText = (spans: readonly ReceivedSpan[]): string => JSON.stringify(spans, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

export interface OtlpReceiver {
  /** The base address, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  requests: ReceivedRequest[];
  /** Export requests held unanswered (`hold`). */
  held(): number;
  /** Waits until `predicate` holds over the spans received so far (polling), or throws after `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number, what?: string): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export interface OtlpReceiverOptions {
  /** Serve https with this key and certificate; with `ca`, require a client certificate it signed. */
  tls?: { key: Buffer; cert: Buffer; ca?: Buffer };
  /** Never answer an export (the request is still counted in `held`). */
  hold?: boolean;
}

export async function startOtlpReceiver(opts: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: ReceivedRequest[] = [];
  let held = 0;
  const listener: RequestListener = (req, res) => {
    void (async () => {
      if (opts.hold) {
        held++;
        return;
      }
      const raw = await bodyOf(req);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const contentType = String(req.headers['content-type'] ?? '');
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let decoded: ReceivedSpan[];
      try {
        decoded = decodeTraces(contentType, body);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        return;
      }
      spans.push(...decoded);
      requests.push({ contentType, body, headers: req.headers, spans: decoded.length });
      // An empty ExportTraceServiceResponse: nothing rejected.
      if (contentType.startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    })();
  };
  const { tls } = opts;
  const server: Server = tls
    ? createHttpsServer({ key: tls.key, cert: tls.cert, ...(tls.ca ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) }, listener)
    : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    spans,
    requests,
    held: () => held,
    async waitFor(predicate, timeoutMs = 15_000, what = 'spans') {
      const until = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}; received: ${spans.map((s) => s.name).join(', ') || 'nothing'}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
