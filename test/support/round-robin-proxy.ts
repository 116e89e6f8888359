// A round-robin HTTP proxy on loopback, as a hospital's load balancer in front of several replicas: each
// request goes to the next upstream; one that refuses the connection (a killed replica) is skipped for the
// next, the way a balancer's passive health check does. Bodies pass through byte for byte, since the
// receiver verifies its signature over the raw bytes.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';

export interface RoundRobinProxy {
  url: string;
  /** Requests answered by each upstream, by its URL. */
  served(): Record<string, number>;
  close(): Promise<void>;
}

/** Answers 502 when no upstream takes the connection: the sender retries, as it would behind a real balancer. */
export async function startRoundRobinProxy(upstreams: () => readonly string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const served: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    void readAll(req).then(async (body) => {
      const targets = upstreams();
      for (let tried = 0; tried < targets.length; tried++) {
        const target = targets[next++ % targets.length]!;
        const answered = await forward(target, req, body).catch(() => undefined);
        if (!answered) continue;
        served[target] = (served[target] ?? 0) + 1;
        res.writeHead(answered.status, answered.headers);
        res.end(answered.body);
        return;
      }
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"no_upstream","message":"no replica took the connection"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    served: () => ({ ...served }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** Rejects when the upstream does not take the connection or drops it before answering. */
function forward(target: string, req: IncomingMessage, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url ?? '/', target);
    const headers = { ...req.headers, host: url.host, 'content-length': String(body.length) };
    const out = request(url, { method: req.method ?? 'GET', headers, agent: false }, (res) => {
      void readAll(res).then((answer) => resolve({ status: res.statusCode ?? 502, headers: withoutHopByHop(res.headers), body: answer }), reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}

function withoutHopByHop(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name === 'connection' || name === 'transfer-encoding' || name === 'keep-alive') continue;
    kept[name] = value;
  }
  return kept;
}
