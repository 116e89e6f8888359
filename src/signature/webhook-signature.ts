// The webhook signature scheme of the service interface, in one module: the receiver verifies with it;
// the bundled simulator, `replay`, the tests and the benchmarks sign with it (signedWebhookHeaders).
//   X-Service-Signature: v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body bytes)> [v1=... ...]
// Verification works on the raw bytes as received (never a re-serialised object), compares lengths
// first and then in constant time, and fails with one error class whose `reason` says why.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_PREFIX = 'v1=';

export const HEADERS = {
  key: 'x-service-key',
  timestamp: 'x-service-timestamp',
  signature: 'x-service-signature',
  eventId: 'x-service-event-id',
  eventType: 'x-service-event-type',
  attempt: 'x-service-delivery-attempt',
} as const;

export type VerificationFailure = 'missing_header' | 'unknown_key' | 'bad_timestamp' | 'timestamp_out_of_tolerance' | 'bad_signature';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

function hmacHex(secret: string, timestamp: string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(timestamp).update('.').update(body).digest('hex');
}

/** One `v1=...` value for one secret. */
export function computeSignature(secret: string, timestamp: string, body: Uint8Array): string {
  return SIGNATURE_PREFIX + hmacHex(secret, timestamp, body);
}

/** The header value for every active secret (several during a rotation), space-separated. */
export function signatureHeader(secrets: readonly string[], timestamp: string, body: Uint8Array): string {
  return secrets.map((s) => computeSignature(s, timestamp, body)).join(' ');
}

export interface SignedWebhookInput {
  keyId: string;
  /** Every active signing secret (several during a rotation). */
  secrets: readonly string[];
  /** When the attempt leaves, in Unix seconds. */
  timestamp: number;
  /** The exact bytes sent. */
  body: Uint8Array;
  eventId: string;
  eventType: string;
  /** 1 for the first delivery attempt. */
  attempt: number;
}

/** The seven headers of one webhook delivery as the service sends it, signed over `body`. */
export function signedWebhookHeaders(input: SignedWebhookInput): Record<string, string> {
  const ts = String(input.timestamp);
  return {
    'content-type': 'application/json',
    [HEADERS.key]: input.keyId,
    [HEADERS.timestamp]: ts,
    [HEADERS.signature]: signatureHeader(input.secrets, ts, input.body),
    [HEADERS.eventId]: input.eventId,
    [HEADERS.eventType]: input.eventType,
    [HEADERS.attempt]: String(input.attempt),
  };
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) return false;
  return timingSafeEqual(x, y);
}

export interface VerifyInput {
  body: Uint8Array;
  /** Header lookup, case-insensitive (Node lower-cases incoming header names). */
  headers: Record<string, string | string[] | undefined>;
  secrets: readonly string[];
  keyId: string;
  toleranceSeconds: number;
  nowMs: number;
}

function header(headers: VerifyInput['headers'], name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** The checks made before the body: the headers there, the key id, a fresh timestamp; the offered signatures. */
function checkHeaders(input: Omit<VerifyInput, 'body'>): { ts: string; offered: string[] } {
  const key = header(input.headers, HEADERS.key);
  const ts = header(input.headers, HEADERS.timestamp);
  const sig = header(input.headers, HEADERS.signature);
  if (!key || !ts || !sig) throw new WebhookVerificationError('missing_header', 'a signature header is missing');
  if (!constantTimeEqual(key, input.keyId)) throw new WebhookVerificationError('unknown_key', 'unknown key id');
  if (!/^\d{1,12}$/.test(ts)) throw new WebhookVerificationError('bad_timestamp', 'timestamp is not Unix seconds');
  // Whole seconds on both sides, so exactly ±tolerance passes and one second more fails.
  const ageSeconds = Math.floor(input.nowMs / 1000) - Number(ts);
  if (Math.abs(ageSeconds) > input.toleranceSeconds) throw new WebhookVerificationError('timestamp_out_of_tolerance', 'timestamp outside the accepted window');
  return { ts, offered: sig.split(' ').filter((s) => s.startsWith(SIGNATURE_PREFIX)) };
}

/** Whether one of `offered` is `expected`; every candidate compared, so the time taken does not tell which one matched. */
function anyMatches(offered: readonly string[], expected: readonly string[]): boolean {
  let matched = false;
  for (const e of expected) for (const candidate of offered) if (constantTimeEqual(candidate, e)) matched = true;
  return matched;
}

/** Throws WebhookVerificationError unless the delivery is authentic and fresh. */
export function verifyWebhook(input: VerifyInput): void {
  const { ts, offered } = checkHeaders(input);
  if (
    !anyMatches(
      offered,
      input.secrets.map((secret) => computeSignature(secret, ts, input.body)),
    )
  )
    throw new WebhookVerificationError('bad_signature', 'signature does not match');
}

/** A delivery verified while its body is read: the HMAC of each secret fed piece by piece, the body never held whole here. */
export interface StreamingVerifier {
  update(chunk: Uint8Array): void;
  /** Throws WebhookVerificationError (bad_signature) unless a signature matches the bytes fed. */
  verify(): void;
}

/**
 * The same verification as verifyWebhook for a body read in pieces (one too large to be read before it is
 * judged): the headers are checked at once, before a byte of the body is read (throws as verifyWebhook does),
 * and the HMAC over the raw bytes as they arrive.
 */
export function streamingVerifier(input: Omit<VerifyInput, 'body'>): StreamingVerifier {
  const { ts, offered } = checkHeaders(input);
  const hmacs = input.secrets.map((secret) => createHmac('sha256', secret).update(ts).update('.'));
  return {
    update(chunk) {
      for (const h of hmacs) h.update(chunk);
    },
    verify() {
      if (
        !anyMatches(
          offered,
          hmacs.map((h) => SIGNATURE_PREFIX + h.digest('hex')),
        )
      )
        throw new WebhookVerificationError('bad_signature', 'signature does not match');
    },
  };
}
