// The bundled FHIR server's small HTTP helpers over node:http: bounded body reading (JSON and form) and
// writing JSON answers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationOutcome, OperationOutcomeIssue } from '@medplum/fhirtypes';

const MAX_BODY = 20 * 1024 * 1024;

export class BadRequestBody extends Error {}

function readText(req: IncomingMessage, maxBytes = MAX_BODY): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) reject(new BadRequestBody('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req);
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    throw new BadRequestBody('body is not JSON');
  }
}

/** application/x-www-form-urlencoded; a token request is small, so the limit is too. */
export async function readFormBody(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readText(req, 64 * 1024));
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

export function sendFhir(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/fhir+json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

export const outcome = (code: OperationOutcomeIssue['code'], text: string): OperationOutcome => ({
  resourceType: 'OperationOutcome',
  issue: [{ severity: 'error', code, details: { text } }],
});
