// The tracing benchmark's collector stand-in, in a process of its own (its CPU is not the adapter's): takes OTLP/HTTP
// trace exports (POST /v1/traces, protobuf) and answers 200 with an empty response as a collector does, keeping the
// bodies; GET /counts (once the run is over) decodes them and answers what it took: requests, bytes, spans by name.
// Decoding only then keeps the sink's CPU off the two cores the adapter and wrk share while they run.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExportTraceServiceRequest } from './otlp-trace-schema.ts';

interface Counts {
  requests: number;
  bytes: number;
  undecoded: number;
  spans: Record<string, number>;
}

const counts: Counts = { requests: 0, bytes: 0, undecoded: 0, spans: {} };
let pending: Buffer[] = [];

function decodePending(): void {
  for (const body of pending) {
    try {
      countSpans(body);
    } catch {
      counts.undecoded++;
    }
  }
  pending = [];
}

function countSpans(body: Buffer): void {
  const req = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body)) as {
    resource_spans?: { scope_spans?: { spans?: { name?: string }[] }[] }[];
  };
  for (const rs of req.resource_spans ?? [])
    for (const ss of rs.scope_spans ?? []) for (const s of ss.spans ?? []) counts.spans[s.name ?? ''] = (counts.spans[s.name ?? ''] ?? 0) + 1;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/counts') {
      decodePending();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
      return;
    }
    if (req.method === 'POST' && req.url === '/counts/reset') {
      Object.assign(counts, { requests: 0, bytes: 0, undecoded: 0, spans: {} });
      pending = [];
      res.writeHead(204).end();
      return;
    }
    const body = Buffer.concat(chunks);
    counts.requests++;
    counts.bytes += body.length;
    pending.push(body);
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
