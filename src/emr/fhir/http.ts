// A small FHIR R4 REST client over undici: JSON in and out, timeouts, and the one rule for failures:
// no answer, 5xx, 429 and 408 can pass (retryable `emr_unavailable`); any other 4xx is `emr_rejected`.
import { Agent, request } from 'undici';
import { AppError } from '../../errors.ts';

export class EmrError extends AppError {
  constructor(code: 'emr_unavailable' | 'emr_rejected', message: string, readonly httpStatus?: number, cause?: unknown) {
    super({ code, status: 502, message, retryable: code === 'emr_unavailable', cause });
  }
}

export interface FhirHttp {
  call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T }>;
  /** Fetches bytes from an absolute URL (attachment.url). */
  fetchBytes(url: string): Promise<Uint8Array>;
  close(): Promise<void>;
}

export function createFhirHttp(baseUrl: string, timeoutMs: number): FhirHttp {
  const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect: { timeout: Math.min(timeoutMs, 5_000) } });
  const base = baseUrl.replace(/\/+$/, '');

  async function send(url: string, init: Parameters<typeof request>[1]) {
    try {
      return await request(url, { ...init, dispatcher: agent });
    } catch (cause) {
      throw new EmrError('emr_unavailable', `no answer from the EMR (${(cause as { code?: string }).code ?? 'network error'})`, undefined, cause);
    }
  }

  return {
    async call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, headers: Record<string, string> = {}) {
      const res = await send(`${base}/${path.replace(/^\//, '')}`, {
        method,
        headers: { accept: 'application/fhir+json', ...(body === undefined ? {} : { 'content-type': 'application/fhir+json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.body.text();
      const status = res.statusCode;
      if (status >= 500 || status === 429 || status === 408)
        throw new EmrError('emr_unavailable', `the EMR answered ${status} to ${method} ${path.split('?')[0]}`, status);
      if (status >= 400) throw new EmrError('emr_rejected', `the EMR refused ${method} ${path.split('?')[0]} (${status})`, status);
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch (cause) {
        throw new EmrError('emr_unavailable', 'the EMR answered with a body that is not JSON', status, cause);
      }
      return { status, body: parsed as T };
    },
    async fetchBytes(url) {
      const res = await send(url, { method: 'GET' });
      if (res.statusCode >= 400) {
        await res.body.dump();
        const code = res.statusCode >= 500 || res.statusCode === 429 ? 'emr_unavailable' : 'emr_rejected';
        throw new EmrError(code, `document content answered ${res.statusCode}`, res.statusCode);
      }
      return new Uint8Array(await res.body.arrayBuffer());
    },
    close: () => agent.close(),
  };
}
