// The adapter's client for the service's integration API (/integration/v1/): documents and mappings.
// One undici Agent with timeouts and keep-alive; every answer other than success becomes a
// ServiceCallError that says whether a retry can help. Each call is a client span (src/tracing/), and carries its
// W3C `traceparent`.
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../clock.ts';
import { authorizationHeader, IDEMPOTENT_REPLAYED_HEADER, type MappingEntityType } from '../contract/api.ts';
import { DOCUMENT_PATHS, documentEnvelopeSchema, type DocumentRequest, type DocumentResource } from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';
import { createHttpAgent } from '../http/agent.ts';
import { addTraceHeaders, inSpan } from '../tracing/spans.ts';
import { parseRetryAfter } from '../work/retry-after.ts';
import { classifyStatus, ServiceCallError } from './errors.ts';

export interface ServiceClientOptions {
  baseUrl: string;
  /** A function when the key can change while running (zero-configuration set-up, key rotation). */
  apiKey: string | (() => string);
  timeoutMs: number;
  clock: Clock;
  /** For tests; by default the client owns an Agent and closes it in close(). */
  dispatcher?: Dispatcher;
}

export interface PostDocumentResult {
  httpStatus: number;
  /** True when the service answered with the first response for an externalId it had seen. */
  replayed: boolean;
  resource: DocumentResource;
}

export interface ServiceClient {
  postDocument(type: DocumentType, body: DocumentRequest): Promise<PostDocumentResult>;
  /** undefined when the service does not know the externalId (404). */
  getDocument(externalId: string): Promise<DocumentResource | undefined>;
  putMapping(entityType: MappingEntityType, serviceId: string, externalId: string): Promise<void>;
  close(): Promise<void>;
}

export function createServiceClient(opts: ServiceClientOptions): ServiceClient {
  const ownAgent = opts.dispatcher ? undefined : createHttpAgent({ timeoutMs: opts.timeoutMs, connections: 16 });
  const dispatcher = opts.dispatcher ?? ownAgent!;
  const base = opts.baseUrl.replace(/\/+$/, '');
  const apiKey = typeof opts.apiKey === 'function' ? opts.apiKey : () => opts.apiKey as string;

  /** One call in its span, named by `route` (the path's template: never an id). */
  function call(method: 'GET' | 'POST' | 'PUT', path: string, route: string, body?: unknown) {
    const attributes = { 'http.request.method': method, 'http.route': `/integration/v1/${route}` };
    return inSpan(
      `service ${method} ${route.split('/')[0]}`,
      attributes,
      async (span) => {
        const res = await callIn(method, path, body);
        span.set({ 'http.response.status_code': res.status });
        return res;
      },
      { kind: 'client' },
    );
  }

  async function callIn(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) {
    let res: Dispatcher.ResponseData;
    const headers: Record<string, string> = {
      authorization: authorizationHeader(apiKey()),
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    };
    addTraceHeaders(headers);
    try {
      res = await request(`${base}/integration/v1/${path}`, {
        method,
        dispatcher,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (cause) {
      const code = (cause as { code?: string }).code ?? 'network_error';
      throw new ServiceCallError({ code: 'service_unreachable', message: `no answer from the service (${code})`, retryable: true, cause });
    }
    let parsed: unknown;
    try {
      const text = await res.body.text();
      parsed = text ? JSON.parse(text) : undefined;
    } catch (cause) {
      if (res.statusCode < 300)
        throw new ServiceCallError({ code: 'bad_response', message: 'service answered with a body that is not JSON', retryable: true, cause }, res.statusCode);
    }
    return { status: res.statusCode, headers: res.headers, body: parsed };
  }

  function fail(res: { status: number; headers: Record<string, string | string[] | undefined>; body: unknown }): never {
    throw classifyStatus(res.status, res.body, parseRetryAfter(res.headers['retry-after'], opts.clock.now()));
  }

  function envelope(res: { status: number; body: unknown }): DocumentResource {
    const parsed = documentEnvelopeSchema.safeParse(res.body);
    if (!parsed.success)
      throw new ServiceCallError({ code: 'bad_response', message: 'service answered with an unexpected document shape', retryable: true }, res.status);
    return parsed.data.resource;
  }

  return {
    async postDocument(type, body) {
      const res = await call('POST', DOCUMENT_PATHS[type], DOCUMENT_PATHS[type], body);
      if (res.status !== 200 && res.status !== 201) fail(res);
      const replayed = String(res.headers[IDEMPOTENT_REPLAYED_HEADER] ?? '') === 'true';
      return { httpStatus: res.status, replayed, resource: envelope(res) };
    },
    async getDocument(externalId) {
      const res = await call('GET', `documents/${encodeURIComponent(externalId)}`, 'documents/{externalId}');
      if (res.status === 404) return undefined;
      if (res.status !== 200) fail(res);
      return envelope(res);
    },
    async putMapping(entityType, serviceId, externalId) {
      const res = await call('PUT', `mappings/${entityType}/${encodeURIComponent(serviceId)}`, 'mappings/{entityType}/{serviceId}', { externalId });
      if (res.status !== 200) fail(res);
    },
    async close() {
      await ownAgent?.close();
    },
  };
}
