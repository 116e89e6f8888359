// Builders for signed webhook deliveries: each test changes one thing (a header, the body, the time).
import { randomUUID } from 'node:crypto';
import { signedWebhookHeaders } from '../../src/signature/webhook-signature.ts';

export const TEST_KEY_ID = 'key_test_0001';
export const TEST_SECRET = 'whsec_test_secret_0001';

export function appointmentEventBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventId: randomUUID(),
    eventType: 'appointment.created',
    occurredAt: '2026-01-15T09:59:00.000Z',
    clinicId: 'clinic_1',
    appointment: {
      serviceId: 'apt_1',
      externalId: null,
      startsAt: '2026-01-20T09:00:00.000Z',
      startsAtLocal: '2026-01-20T10:00:00.000+01:00',
      mode: 'Offline',
      status: 'Approved',
      token: 'A-17',
      notes: 'Synthetic test appointment',
      payment: { type: 'Partial', amountPaid: 10, balanceDue: 20, currency: 'EUR', payAtClinic: true },
    },
    doctor: { serviceId: 'doc_1', externalId: null, name: 'Dr Test Doctor' },
    patient: { serviceId: 'pat_1', externalId: null, name: 'Test Patient One', phone: '+15550000001' },
    location: { serviceId: 'loc_1', externalId: null, name: 'Test Clinic Room 1' },
    ...overrides,
  };
}

export interface SignedWebhook {
  body: Buffer;
  headers: Record<string, string>;
}

export interface SignedWebhookOptions {
  body?: Record<string, unknown> | string | Buffer;
  secrets?: string[];
  keyId?: string;
  /** Unix seconds. */
  timestamp?: number;
  attempt?: number;
  headers?: Record<string, string | undefined>;
}

/** A delivery as the service sends it: the seven headers, signed over the exact bytes. */
export function signedWebhook(nowMs: number, opts: SignedWebhookOptions = {}): SignedWebhook {
  const raw = opts.body ?? appointmentEventBody();
  const body = Buffer.isBuffer(raw) ? raw : Buffer.from(typeof raw === 'string' ? raw : JSON.stringify(raw));
  const parsed = typeof raw === 'object' && !Buffer.isBuffer(raw) ? raw : {};
  const headers = signedWebhookHeaders({
    keyId: opts.keyId ?? TEST_KEY_ID,
    secrets: opts.secrets ?? [TEST_SECRET],
    timestamp: opts.timestamp ?? Math.floor(nowMs / 1000),
    body,
    eventId: String(parsed.eventId ?? randomUUID()),
    eventType: String(parsed.eventType ?? 'appointment.created'),
    attempt: opts.attempt ?? 1,
  });
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return { body, headers };
}
