// A webhook subscriber on loopback that records every delivery (headers and raw body) and answers with
// whatever status the test decides, per request.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: Record<string, unknown>;
}

export async function startSubscriber(answer: (r: Received) => number = () => 200) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body.toString()) as Record<string, unknown>;
      } catch {
        // recorded as is
      }
      const r = { headers: req.headers, body, json };
      received.push(r);
      res.writeHead(answer(r)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    setAnswer(fn: (r: Received) => number) {
      answer = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
