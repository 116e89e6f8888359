// Which eventId and eventType a stored delivery is filed under. The interface sends both in headers on
// every delivery, so those are used as they are and the body is not parsed on the request path (the
// processor parses it, and dead-letters an event whose body disagrees with its headers). Without the
// headers the body's values are used; a body that is not JSON still gets a stable id (a hash of its
// bytes), so it is stored once, acknowledged, and later dead-lettered by the processor.
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
  const header = (name: string) => text(Array.isArray(headers[name]) ? headers[name][0] : headers[name]);
  const fromHeaders = { eventId: header(HEADERS.eventId), eventType: header(HEADERS.eventType) };
  if (fromHeaders.eventId && fromHeaders.eventType) return fromHeaders as EventIdentity;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const obj = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  return {
    eventId: fromHeaders.eventId ?? text(obj.eventId) ?? `sha256:${createHash('sha256').update(body).digest('hex')}`,
    eventType: fromHeaders.eventType ?? text(obj.eventType) ?? 'unknown',
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
