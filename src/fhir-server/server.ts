// The bundled FHIR R4 server: @medplum/fhir-router's FhirRouter over its MemoryRepository (real FHIR
// search, conditional create/update, validation), served over node:http. Its listening address is its
// FHIR base URL. The embedded default EMR for `npm start`, the end-to-end tests and QA.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getStatus, isOk, normalizeOperationOutcome } from '@medplum/core';
import { FhirRouter, MemoryRepository, type HttpMethod } from '@medplum/fhir-router';
import type { OperationOutcome, Resource } from '@medplum/fhirtypes';
import type { Logger } from '../logger.ts';
import { loadFhirDefinitions } from './definitions.ts';
import { createJournal, replayJournal, type ResourceJournal } from './persistence.ts';

export interface FhirServerOptions {
  port?: number;
  host?: string;
  /** JSON-lines file that keeps the data across restarts; in memory only when absent. */
  dataFile?: string;
  logger: Logger;
}

export interface RunningFhirServer {
  baseUrl: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY = 20 * 1024 * 1024;
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function readJsonBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text ? JSON.parse(text) : undefined);
      } catch {
        reject(new Error('body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/fhir+json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

const invalid = (text: string): OperationOutcome => ({
  resourceType: 'OperationOutcome',
  issue: [{ severity: 'error', code: 'invalid', details: { text } }],
});

export async function startFhirServer(opts: FhirServerOptions): Promise<RunningFhirServer> {
  loadFhirDefinitions();
  const repo = new MemoryRepository();
  const router = new FhirRouter();
  let journal: ResourceJournal | undefined;
  if (opts.dataFile) {
    const restored = await replayJournal(opts.dataFile, repo);
    journal = createJournal(opts.dataFile);
    opts.logger.info({ restored }, 'FHIR data restored');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase() as HttpMethod;
    const url = req.url ?? '/';
    if (url === '/metadata' || url.startsWith('/metadata?')) {
      send(res, 200, { resourceType: 'CapabilityStatement', status: 'active', kind: 'instance', fhirVersion: '4.0.1', format: ['json'], date: '2026-01-01' });
      return;
    }
    let body: unknown;
    try {
      body = WRITES.has(method) ? await readJsonBody(req) : undefined;
    } catch (err) {
      send(res, 400, invalid((err as Error).message));
      return;
    }
    const [outcome, resource] = await router.handleRequest(
      { method, url, pathname: '', query: {}, params: {}, body, headers: req.headers },
      repo,
    );
    const status = getStatus(outcome);
    if (isOk(outcome) && WRITES.has(method)) {
      if (method === 'DELETE') journal?.recordDeletion(url.split('?')[0]!.replace(/^\//, ''));
      else if (resource && 'id' in resource) journal?.record(resource as Resource);
    }
    const location = status === 201 && resource ? { location: `/${resource.resourceType}/${resource.id}` } : undefined;
    send(res, status, resource ?? normalizeOperationOutcome(outcome), location);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      opts.logger.error({ err: (err as Error).message }, 'FHIR request failed');
      if (!res.headersSent) send(res, 500, invalid('internal error'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
