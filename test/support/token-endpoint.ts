// A stand-in OAuth token endpoint on loopback for tests of the adapter's SMART sign-in: it verifies each
// client assertion on its own with jose (against a JWKS the test builds), records what it saw, and issues tokens.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import type { Clock } from '../../src/clock.ts';

export interface TokenRequestSeen {
  form: Record<string, string>;
  header: ProtectedHeaderParameters | undefined;
  /** The verified claims; undefined when the assertion did not verify. */
  claims: JWTPayload | undefined;
  /** Why the assertion did not verify. */
  refused?: string;
  /** The access token answered, if any. */
  issued?: string;
}

export interface TokenEndpointStub {
  /** `http://127.0.0.1:<port>`: also serves `/.well-known/smart-configuration`. */
  baseUrl: string;
  /** Where tokens are asked for; named by the smart-configuration. */
  tokenUrl: string;
  /** Every POST to the token URL, in order. */
  seen: TokenRequestSeen[];
  /** GETs of the smart-configuration. */
  discoveries(): number;
  /** Every token request is answered with this until recover(). */
  failWith(status: number, body: object): void;
  recover(): void;
  /** Closes the port (nothing answers there) until restart(), which listens on the same port again. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TokenEndpointOptions {
  clientId: string;
  /** The client's public key as the authorization server holds it (built by the test, not by the code under test). */
  publicJwk: JWK;
  /** The time assertions are checked against (the client's manual clock). */
  clock: Clock;
  lifetimeSeconds?: number;
  tokenPath?: string;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const sendJson = (res: ServerResponse, status: number, body: object) => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
};

export async function startTokenEndpoint(opts: TokenEndpointOptions): Promise<TokenEndpointStub> {
  const lifetime = opts.lifetimeSeconds ?? 60;
  const tokenPath = opts.tokenPath ?? '/oauth2/token';
  const jwks = createLocalJWKSet({ keys: [opts.publicJwk] });
  const seen: TokenRequestSeen[] = [];
  let discoveries = 0;
  let failure: { status: number; body: object } | undefined;
  let issued = 0;
  let tokenUrl = '';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/.well-known/smart-configuration') {
      discoveries++;
      return sendJson(res, 200, { token_endpoint: tokenUrl, token_endpoint_auth_methods_supported: ['private_key_jwt'] });
    }
    if (req.method !== 'POST' || path !== tokenPath) return sendJson(res, 404, { error: 'not_found' });
    const form = Object.fromEntries(new URLSearchParams(await readBody(req)));
    const record: TokenRequestSeen = { form, header: undefined, claims: undefined };
    seen.push(record);
    try {
      record.header = decodeProtectedHeader(form.client_assertion ?? '');
      const verified = await jwtVerify(form.client_assertion ?? '', jwks, {
        issuer: opts.clientId,
        subject: opts.clientId,
        audience: tokenUrl,
        algorithms: ['ES384', 'RS384'],
        typ: 'JWT',
        requiredClaims: ['exp', 'iat', 'jti'],
        currentDate: new Date(opts.clock.now()),
      });
      record.claims = verified.payload;
    } catch (err) {
      record.refused = (err as Error).message;
      return sendJson(res, 401, { error: 'invalid_client', error_description: record.refused });
    }
    if (failure) return sendJson(res, failure.status, failure.body);
    record.issued = `access-token-${++issued}`;
    return sendJson(res, 200, { access_token: record.issued, token_type: 'bearer', expires_in: lifetime, scope: form.scope });
  }

  const make = () =>
    createServer((req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) sendJson(res, 500, { error: 'server_error' });
      });
    });
  let server: Server | undefined = make();
  const port = await listen(server, 0);
  const baseUrl = `http://127.0.0.1:${port}`;
  tokenUrl = `${baseUrl}${tokenPath}`;

  return {
    baseUrl,
    tokenUrl,
    seen,
    discoveries: () => discoveries,
    failWith: (status, body) => {
      failure = { status, body };
    },
    recover: () => {
      failure = undefined;
    },
    async stop() {
      if (server) await closeServer(server);
      server = undefined;
    },
    async restart() {
      server ??= make();
      await listen(server, port);
    },
    async close() {
      if (server) await closeServer(server);
      server = undefined;
    },
  };
}
