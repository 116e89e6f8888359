// A small FHIR R4 REST client over undici: JSON in and out, timeouts, sign-in on every call (./auth), and
// the failure rules: no answer or a transient status is `emr_unavailable`; 401/403 that one renewed
// token does not cure is `emr_unauthorized` (an incident); any other 4xx is `emr_rejected`. Each call is a client
// span (src/tracing/) and carries its W3C `traceparent` to the EMR. Calls in flight are bounded by the adaptive
// limit (src/work/adaptive-limit.ts, EMR_MAX_CONCURRENCY) over a keep-alive pool of that many connections; a call
// the EMR pushes back on (429, or 503 with Retry-After) lowers the limit and fails with the wait it asked for.
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../../clock.ts';
import { createHttpAgent } from '../../http/agent.ts';
import { isTransientStatus } from '../../http/transient.ts';
import { addTraceHeaders, inSpan, type SpanScope } from '../../tracing/spans.ts';
import { type AdaptiveLimit, createAdaptiveLimit } from '../../work/adaptive-limit.ts';
import { parseRetryAfter } from '../../work/retry-after.ts';
import { EmrError } from '../errors.ts';
import { createFhirAuth, type FhirAuth, type FhirAuthSettings } from './auth/index.ts';

export { EmrError } from '../errors.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH';

/** An answer: its status, its parsed body (undefined when empty), and the headers a write answers with. */
export interface FhirAnswer<T> {
  status: number;
  body: T;
  /** `Location` of a create or update (`[base]/[type]/[id]/_history/[vid]`), when sent. */
  location?: string;
  /** `ETag` of the record's version (`W/"3"`), when sent. */
  etag?: string;
}

export interface FhirHttp {
  call<T>(method: Method, path: string, body?: unknown, headers?: Record<string, string>, opts?: { signIn?: boolean }): Promise<FhirAnswer<T>>;
  /** FHIR_BASE_URL without a trailing slash: where every path is sent, and the only place a `next` link may lead. */
  baseUrl: string;
  /** Reads a document's content at a URL (absolute, or relative to the base) on the FHIR server's own origin. */
  fetchBytes(url: string): Promise<Uint8Array>;
  auth: FhirAuth;
  close(): Promise<void>;
}

export interface FhirHttpOptions {
  baseUrl: string;
  timeoutMs: number;
  auth: FhirAuthSettings;
  clock: Clock;
  /** Largest document content read from the EMR, in bytes (a Binary's JSON is a third larger than the file). */
  maxContentBytes: number;
  /** Calls in flight at once, adapted to the EMR's answers (EMR_MAX_CONCURRENCY); unset: a fixed 16. */
  limit?: AdaptiveLimit;
}

/** For the limit: the wait a push-back (EmrError.pushedBack) asked for (0: none said), or false for any other failure. */
const pushedBack = (err: unknown): number | false => (err instanceof EmrError && err.pushedBack ? (err.retryAfterMs ?? 0) : false);

/**
 * Runs `call` within the limit: its latency and a push-back feed it. A pushed-back call is not sent again here:
 * its failure carries the wait asked for, and the caller's retry rule gives it that time (src/work/retry-decision.ts),
 * holding no slot meanwhile.
 */
const withinLimit = <T>(limit: AdaptiveLimit, call: () => Promise<T>): Promise<T> => limit.run(call, pushedBack);

const pathOnly = (path: string) => path.split('?')[0];

/** A failed answer as the port's error: a transient status an outage (with the wait asked for, if any), any other a refusal. */
export const statusFailure = (status: number, message: string, retryAfterMs?: number): EmrError =>
  new EmrError(isTransientStatus(status) ? 'emr_unavailable' : 'emr_rejected', message, status, undefined, retryAfterMs);

/**
 * What a call's span says of it: the resource type (a call to the base posts a transaction Bundle), and the record's
 * id when the path names one (`Patient/12`); never the query.
 */
function callAttributes(method: Method, label: string) {
  const [resourceType, id] = label.split('/');
  return {
    'http.request.method': method,
    'fhir.resource_type': resourceType || 'Bundle',
    ...(id && /^[A-Z][A-Za-z]+$/.test(resourceType ?? '') ? { 'emr_bridge.emr.id': `${resourceType}/${id}` } : {}),
  };
}

/** A call's span, with the status the EMR answered (a failure's too). */
function inCallSpan<T>(method: Method, what: string, label: string, fn: (span: SpanScope) => Promise<T>): Promise<T> {
  return inSpan(
    `FHIR ${method} ${what}`,
    callAttributes(method, label),
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        const status = (err as { httpStatus?: unknown }).httpStatus;
        if (typeof status === 'number') span.set({ 'http.response.status_code': status });
        throw err;
      }
    },
    { kind: 'client' },
  );
}

async function send(url: string, init: NonNullable<Parameters<typeof request>[1]>) {
  try {
    return await request(url, init);
  } catch (cause) {
    throw new EmrError('emr_unavailable', `no answer from the EMR (${(cause as { code?: string }).code ?? 'network error'})`, undefined, cause);
  }
}

async function readCapped(res: Dispatcher.ResponseData<unknown>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      res.body.destroy();
      throw new EmrError('document_content_refused', `the document content is larger than ${max} bytes`, res.statusCode);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** What a 403 most likely lacks: the SMART system scope of the interaction (v1 and v2 names). */
function scopeHint(method: Method, label: string): string {
  const type = label.split('/')[0] || '*';
  const [v1, v2] = method === 'GET' ? ['read', 'rs'] : method === 'POST' ? ['write', 'c'] : ['write', 'u'];
  return `: the client may lack the scope system/${type}.${v1} (system/${type}.${v2} in SMART v2)`;
}

/** The headers a create or update answers with, as single strings. */
function writeHeaders(headers: Dispatcher.ResponseData['headers']): Pick<FhirAnswer<unknown>, 'location' | 'etag'> {
  const one = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const location = one('location');
  const etag = one('etag');
  return { ...(location ? { location } : {}), ...(etag ? { etag } : {}) };
}

/** A FHIR Binary read as JSON carries its bytes in `data`; anything else is the bytes themselves. */
function contentBytes(raw: Buffer, contentType: string | undefined): Uint8Array {
  if (!/json/.test(contentType ?? '')) return new Uint8Array(raw);
  try {
    const resource = JSON.parse(raw.toString('utf8')) as { resourceType?: string; data?: string };
    if (resource.resourceType === 'Binary' && typeof resource.data === 'string') return new Uint8Array(Buffer.from(resource.data, 'base64'));
  } catch {
    // Not JSON after all: the bytes are the content.
  }
  return new Uint8Array(raw);
}

export function createFhirHttp(opts: FhirHttpOptions): FhirHttp {
  const limit = opts.limit ?? createAdaptiveLimit({ max: 16, clock: opts.clock });
  const agent = createHttpAgent({ timeoutMs: opts.timeoutMs, connections: limit.max });
  const base = opts.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const auth = createFhirAuth(opts.auth, { fhirBaseUrl: base, clock: opts.clock, dispatcher: agent });

  /** One call with sign-in: a 401 gets one renewed token and one retry; 401/403 after that is an incident. */
  async function exchange(method: Method, url: string, label: string, headers: Record<string, string>, body: string | undefined, signIn: boolean) {
    const attempt = (authorization: string | undefined) =>
      send(url, { method, dispatcher: agent, headers: { ...headers, ...(authorization ? { authorization } : {}) }, ...(body === undefined ? {} : { body }) });
    const first = signIn ? await auth.authorization() : undefined;
    let res = await attempt(first);
    let renewed = false;
    // A 403 may be a token issued before a scope was granted: a fresh one is tried too, once.
    if ((res.statusCode === 401 || res.statusCode === 403) && signIn) {
      const refused = res.statusCode;
      await res.body.dump();
      const fresh = await auth.renew(first);
      if (fresh === undefined) throw new EmrError('emr_unauthorized', `the EMR answered ${refused} to ${method} ${label}`, refused);
      res = await attempt(fresh);
      renewed = true;
    }
    if (res.statusCode === 401 || res.statusCode === 403) {
      await res.body.dump();
      throw new EmrError(
        'emr_unauthorized',
        `the EMR answered ${res.statusCode} to ${method} ${label}${renewed ? ' with a fresh token' : ''}${res.statusCode === 403 ? scopeHint(method, label) : ''}`,
        res.statusCode,
      );
    }
    return res;
  }

  return {
    auth,
    baseUrl: base,
    call<T>(method: Method, path: string, body?: unknown, headers: Record<string, string> = {}, callOpts: { signIn?: boolean } = {}) {
      const label = pathOnly(path)!.replace(/^\//, '');
      return withinLimit(limit, () =>
        inCallSpan(method, label.split('/')[0] || 'base', label, (span) => callIn<T>(span, method, path, label, body, headers, callOpts)),
      );
    },
    async fetchBytes(url) {
      const target = new URL(url, `${base}/`);
      // The token is the EMR's: it is never shown to, nor any byte read from, another origin.
      if (target.origin !== origin)
        throw new EmrError('document_content_refused', "the document's attachment URL is on another origin than the FHIR server; it is not fetched");
      return withinLimit(limit, () => inCallSpan('GET', 'document content', 'Binary', (span) => bytesIn(span, target)));
    },
    close: () => agent.close(),
  };

  async function callIn<T>(
    span: SpanScope,
    method: Method,
    path: string,
    label: string,
    body: unknown,
    headers: Record<string, string>,
    callOpts: { signIn?: boolean },
  ): Promise<FhirAnswer<T>> {
    const sent: Record<string, string> = {
      accept: 'application/fhir+json',
      ...(body === undefined ? {} : { 'content-type': 'application/fhir+json' }),
      ...headers,
    };
    addTraceHeaders(sent);
    const res = await exchange(
      method,
      `${base}/${path.replace(/^\//, '')}`,
      label,
      sent,
      body === undefined ? undefined : JSON.stringify(body),
      callOpts.signIn ?? true,
    );
    const text = await res.body.text();
    const status = res.statusCode;
    span.set({ 'http.response.status_code': status });
    if (isTransientStatus(status))
      throw new EmrError(
        'emr_unavailable',
        `the EMR answered ${status} to ${method} ${label}`,
        status,
        undefined,
        parseRetryAfter(res.headers['retry-after'], opts.clock.now()),
      );
    // 405: the interaction itself is not allowed, for every record alike: an EMR-wide incident, not one dead letter per event.
    if (status === 405)
      throw new EmrError(
        'emr_incompatible',
        `the EMR does not allow ${method} ${label.split('/')[0] || 'on its base'} (405): check its CapabilityStatement, FHIR_CREATES and the client's scopes`,
        status,
      );
    if (status >= 400) throw new EmrError('emr_rejected', `the EMR refused ${method} ${label} (${status})`, status);
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch (cause) {
      throw new EmrError('emr_unavailable', 'the EMR answered with a body that is not JSON', status, cause);
    }
    return { status, body: parsed as T, ...writeHeaders(res.headers) };
  }

  async function bytesIn(span: SpanScope, target: URL): Promise<Uint8Array> {
    const sent: Record<string, string> = { accept: '*/*' };
    addTraceHeaders(sent);
    const res = await exchange('GET', target.href, 'document content', sent, undefined, true);
    span.set({ 'http.response.status_code': res.statusCode });
    if (res.statusCode >= 400) {
      await res.body.dump();
      throw statusFailure(res.statusCode, `document content answered ${res.statusCode}`, parseRetryAfter(res.headers['retry-after'], opts.clock.now()));
    }
    const contentType = res.headers['content-type'];
    return contentBytes(await readCapped(res, opts.maxContentBytes), Array.isArray(contentType) ? contentType[0] : contentType);
  }
}
