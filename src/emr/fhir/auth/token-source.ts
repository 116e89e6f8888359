// SMART Backend Services tokens: finds the token endpoint (FHIR_TOKEN_URL, or the EMR's
// .well-known/smart-configuration), trades a fresh client assertion for an access token, reuses it until
// shortly before it runs out, and lets concurrent callers share one request. A refusal by the
// authorization server is an incident (emr_unauthorized); no answer or a 5xx is an outage.
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../../../clock.ts';
import { isTransientStatus } from '../../../http/transient.ts';
import { EmrError } from '../../errors.ts';
import { createClientAssertion } from './assertion.ts';
import type { ClientKey } from './keys.ts';

export interface TokenSourceOptions {
  fhirBaseUrl: string;
  /** Unset: discovered from {fhirBaseUrl}/.well-known/smart-configuration. */
  tokenUrl?: string;
  clientId: string;
  key: ClientKey;
  scopes: string[];
  clock: Clock;
  dispatcher: Dispatcher;
}

export interface TokenSource {
  /** A token valid for a while yet: the cached one, or a new one. */
  token(): Promise<string>;
  /** The EMR refused `rejected`: a new token, unless another call has already replaced it. */
  renew(rejected: string): Promise<string>;
  /** Token requests made so far (tests and benchmarks check reuse with it). */
  requests(): number;
}

interface Held {
  value: string;
  /** When to stop using it: its expiry less a margin for the call in flight and clock skew. */
  renewAt: number;
}

/** Assumed when the answer gives no expires_in; the SMART default lifetime is five minutes. */
const DEFAULT_LIFETIME_SECONDS = 300;
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Renew a fifth of the lifetime early, at least 5 s and at most 60 s before it runs out. */
export function renewalMarginMs(lifetimeSeconds: number): number {
  return Math.min(60_000, Math.max(5_000, lifetimeSeconds * 200));
}

async function postForm(dispatcher: Dispatcher, url: string, form: Record<string, string>) {
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.statusCode, text: await res.body.text() };
  } catch (cause) {
    throw new EmrError(
      'emr_unavailable',
      `no answer from the EMR's token endpoint (${(cause as { code?: string }).code ?? 'network error'})`,
      undefined,
      cause,
    );
  }
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** An answer of the token endpoint as a token, an outage or a refusal. */
function readTokenAnswer(status: number, text: string): { value: string; lifetimeSeconds: number } {
  const body = parseJson(text);
  if (isTransientStatus(status)) throw new EmrError('emr_unavailable', `the EMR's token endpoint answered ${status}`, status);
  if (status >= 400) {
    const code = typeof body?.error === 'string' ? body.error.replace(/[^\w.-]/g, '').slice(0, 40) : `http_${status}`;
    throw new EmrError('emr_unauthorized', `the EMR's authorization server refused the client (${code})`, status);
  }
  if (typeof body?.access_token !== 'string' || !body.access_token)
    throw new EmrError('emr_unavailable', "the EMR's token endpoint answered without an access_token", status);
  const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_SECONDS;
  return { value: body.access_token, lifetimeSeconds: lifetime };
}

export function createTokenSource(opts: TokenSourceOptions): TokenSource {
  const base = opts.fhirBaseUrl.replace(/\/+$/, '');
  let tokenUrl: string | undefined = opts.tokenUrl;
  let held: Held | undefined;
  let inFlight: Promise<Held> | undefined;
  let requests = 0;

  async function discoverTokenUrl(): Promise<string> {
    if (tokenUrl) return tokenUrl;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${base}/.well-known/smart-configuration`, { dispatcher: opts.dispatcher, headers: { accept: 'application/json' } });
    } catch (cause) {
      throw new EmrError('emr_unavailable', 'no answer from the EMR at .well-known/smart-configuration', undefined, cause);
    }
    const body = parseJson(await res.body.text());
    if (res.statusCode !== 200 || typeof body?.token_endpoint !== 'string') {
      const code = isTransientStatus(res.statusCode) ? 'emr_unavailable' : 'emr_unauthorized';
      throw new EmrError(code, `the EMR's .well-known/smart-configuration names no token_endpoint (${res.statusCode}); set FHIR_TOKEN_URL`, res.statusCode);
    }
    tokenUrl = body.token_endpoint;
    return tokenUrl;
  }

  async function requestToken(): Promise<Held> {
    const url = await discoverTokenUrl();
    const assertion = await createClientAssertion({ key: opts.key, clientId: opts.clientId, tokenUrl: url, clock: opts.clock });
    requests++;
    const res = await postForm(opts.dispatcher, url, {
      grant_type: 'client_credentials',
      scope: opts.scopes.join(' '),
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: assertion,
    });
    const token = readTokenAnswer(res.status, res.text);
    return { value: token.value, renewAt: opts.clock.now() + token.lifetimeSeconds * 1000 - renewalMarginMs(token.lifetimeSeconds) };
  }

  /** One request at a time: every caller waiting for a token shares it. */
  function refresh(): Promise<string> {
    inFlight ??= requestToken()
      .then((h) => (held = h))
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight.then((h) => h.value);
  }

  return {
    token() {
      if (held && opts.clock.now() < held.renewAt) return Promise.resolve(held.value);
      return refresh();
    },
    renew(rejected) {
      if (held && held.value !== rejected && opts.clock.now() < held.renewAt) return Promise.resolve(held.value);
      if (held?.value === rejected) held = undefined;
      return refresh();
    },
    requests: () => requests,
  };
}
