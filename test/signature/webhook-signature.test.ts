// The signature scheme: vectors computed outside the module (openssl), tolerance edges both ways,
// tampered bytes, re-serialised JSON, key id, rotation with several secrets and several signatures; the
// headers of one delivery (signedWebhookHeaders) as the receiver's verifier reads them.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  computeSignature,
  signatureHeader,
  signedWebhookHeaders,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyInput,
} from '../../src/signature/webhook-signature.ts';

const SECRET = 'whsec_vector_secret';
const TS = '1768471200';
const BODY = Buffer.from('{"eventId":"3f1c2a9e-0b7d-4c51-9a43-2d8e6f0a1b2c","eventType":"appointment.created"}');
// printf '%s' "$TS.$BODY" | openssl dgst -sha256 -hmac whsec_vector_secret
const OPENSSL_VECTOR = 'v1=01853755a75c8f3e6cb7bcc9c286bc1151420b487c0e921277dc58316ccbdff1';

function openssl(secret: string, signed: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: signed }).toString();
  return `v1=${out.trim().split(/\s+/).pop()}`;
}

function input(overrides: Partial<VerifyInput> = {}): VerifyInput {
  return {
    body: BODY,
    headers: { 'x-service-key': 'key_1', 'x-service-timestamp': TS, 'x-service-signature': OPENSSL_VECTOR },
    secrets: [SECRET],
    keyId: 'key_1',
    toleranceSeconds: 300,
    nowMs: Number(TS) * 1000,
    ...overrides,
  };
}

function reason(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
}

describe('computeSignature', () => {
  it('matches the recorded openssl vector', () => {
    expect(computeSignature(SECRET, TS, BODY)).toBe(OPENSSL_VECTOR);
  });

  it('matches openssl run now on arbitrary bytes, including non-UTF-8 ones', () => {
    const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from('"}')]);
    const signed = Buffer.concat([Buffer.from(`${TS}.`), body]);
    expect(computeSignature('another secret', TS, body)).toBe(openssl('another secret', signed));
  });

  it('joins one value per secret with spaces', () => {
    const header = signatureHeader(['a', 'b'], TS, BODY);
    expect(header.split(' ')).toEqual([computeSignature('a', TS, BODY), computeSignature('b', TS, BODY)]);
  });
});

describe('verifyWebhook', () => {
  it('accepts the openssl-signed delivery', () => {
    expect(reason(() => verifyWebhook(input()))).toBeUndefined();
  });

  it.each([
    ['300 s old', 300, undefined],
    ['301 s old', 301, 'timestamp_out_of_tolerance'],
    ['300 s in the future', -300, undefined],
    ['301 s in the future', -301, 'timestamp_out_of_tolerance'],
  ])('tolerance: a timestamp %s', (_label, ageSeconds, expected) => {
    expect(reason(() => verifyWebhook(input({ nowMs: (Number(TS) + ageSeconds) * 1000 })))).toBe(expected);
  });

  it('rejects one tampered byte', () => {
    const tampered = Buffer.from(BODY);
    tampered[10] = tampered[10]! ^ 0x01;
    expect(reason(() => verifyWebhook(input({ body: tampered })))).toBe('bad_signature');
  });

  it('rejects the same JSON with different whitespace (bytes are what is signed)', () => {
    const spaced = Buffer.from(JSON.stringify(JSON.parse(BODY.toString()), null, 1));
    expect(reason(() => verifyWebhook(input({ body: spaced })))).toBe('bad_signature');
  });

  it('rejects a wrong key id', () => {
    const headers = { ...input().headers, 'x-service-key': 'key_2' };
    expect(reason(() => verifyWebhook(input({ headers })))).toBe('unknown_key');
  });

  it.each(['x-service-key', 'x-service-timestamp', 'x-service-signature'])('rejects a missing %s', (name) => {
    const headers: Record<string, string> = { ...(input().headers as Record<string, string>) };
    delete headers[name];
    expect(reason(() => verifyWebhook(input({ headers })))).toBe('missing_header');
  });

  it('rejects a timestamp that is not Unix seconds', () => {
    const headers = { ...input().headers, 'x-service-timestamp': '2026-01-15T10:00:00Z' };
    expect(reason(() => verifyWebhook(input({ headers })))).toBe('bad_timestamp');
  });

  it('rejects a signature of a different length without throwing from the comparison', () => {
    const headers = { ...input().headers, 'x-service-signature': 'v1=abc' };
    expect(reason(() => verifyWebhook(input({ headers })))).toBe('bad_signature');
  });

  it('rotation: accepts when any configured secret matches any offered signature', () => {
    const header = `v1=${'0'.repeat(64)} ${OPENSSL_VECTOR}`;
    const headers = { ...input().headers, 'x-service-signature': header };
    expect(reason(() => verifyWebhook(input({ headers, secrets: ['old secret', SECRET] })))).toBeUndefined();
    expect(reason(() => verifyWebhook(input({ headers, secrets: ['old secret'] })))).toBe('bad_signature');
  });

  it('ignores values without the v1= prefix (another scheme version)', () => {
    const headers = { ...input().headers, 'x-service-signature': OPENSSL_VECTOR.replace('v1=', 'v2=') };
    expect(reason(() => verifyWebhook(input({ headers })))).toBe('bad_signature');
  });
});

describe('signedWebhookHeaders', () => {
  const delivery = (secrets: string[]) =>
    signedWebhookHeaders({ keyId: 'key_1', secrets, timestamp: Number(TS), body: BODY, eventId: 'evt_1', eventType: 'appointment.created', attempt: 3 });

  it('makes the seven headers of a delivery, signed as computed outside the module', () => {
    expect(delivery([SECRET])).toEqual({
      'content-type': 'application/json',
      'x-service-key': 'key_1',
      'x-service-timestamp': TS,
      'x-service-signature': OPENSSL_VECTOR,
      'x-service-event-id': 'evt_1',
      'x-service-event-type': 'appointment.created',
      'x-service-delivery-attempt': '3',
    });
  });

  it("passes the receiver's verifier, with each secret of a rotation, and fails it for other bytes", () => {
    const headers = delivery(['old secret', SECRET]);
    expect(reason(() => verifyWebhook(input({ headers, secrets: [SECRET] })))).toBeUndefined();
    expect(reason(() => verifyWebhook(input({ headers, secrets: ['old secret'] })))).toBeUndefined();
    expect(reason(() => verifyWebhook(input({ headers, secrets: ['another secret'] })))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(input({ headers, body: Buffer.concat([BODY, Buffer.from(' ')]) })))).toBe('bad_signature');
    expect(reason(() => verifyWebhook(input({ headers, keyId: 'key_2' })))).toBe('unknown_key');
  });
});
