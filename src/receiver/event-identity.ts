// Which eventId and eventType a stored delivery is filed under. The body's values win (they are covered
// by the signature); the headers are the fallback; a body that is not JSON still gets a stable id (a
// hash of its bytes), so it is stored once, acknowledged, and later dead-lettered by the processor.
import { createHash } from 'node:crypto';
import { HEADERS } from '../signature/webhook-signature.ts';

export interface EventIdentity {
  eventId: string;
  eventType: string;
}

const MAX_ID = 200;

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_ID ? v : undefined;
}

export function identifyEvent(body: Buffer, headers: Record<string, string | string[] | undefined>): EventIdentity {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const obj = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  const header = (name: string) => text(Array.isArray(headers[name]) ? headers[name][0] : headers[name]);
  return {
    eventId:
      text(obj.eventId) ??
      header(HEADERS.eventId) ??
      `sha256:${createHash('sha256').update(body).digest('hex')}`,
    eventType: text(obj.eventType) ?? header(HEADERS.eventType) ?? 'unknown',
  };
}

/** The headers worth keeping with the event: the service's own, plus content-type. */
export function keptHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    if (k.startsWith('x-service-') || k === 'content-type') out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
