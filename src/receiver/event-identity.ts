// Which eventId and eventType a stored delivery is filed under. The interface sends both in headers on
// every delivery, so those are used as they are and the body is not parsed on the request path (the
// processor parses it, and dead-letters an event whose body disagrees with its headers). Without the
// headers the body's values are used; a body that is not JSON still gets a stable id (a hash of its
// bytes), so it is stored once, acknowledged, and later dead-lettered by the processor.
// Called on every webhook: no closures or intermediate objects on the path where both headers are there.
import { createHash } from 'node:crypto';
import { HEADERS } from '../signature/webhook-signature.ts';

export interface EventIdentity {
  eventId: string;
  eventType: string;
}

type Headers = Record<string, string | string[] | undefined>;

const MAX_ID = 200;

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_ID ? v : undefined;
}

function headerText(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return text(Array.isArray(v) ? v[0] : v);
}

export function identifyEvent(body: Buffer, headers: Headers): EventIdentity {
  const eventId = headerText(headers, HEADERS.eventId);
  const eventType = headerText(headers, HEADERS.eventType);
  if (eventId !== undefined && eventType !== undefined) return { eventId, eventType };
  return fromBody(body, eventId, eventType);
}

/** A delivery without one of the headers (not what the interface sends): the body's values, else a hash and 'unknown'. */
function fromBody(body: Buffer, headerId: string | undefined, headerType: string | undefined): EventIdentity {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const obj = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  return {
    eventId: headerId ?? text(obj.eventId) ?? `sha256:${createHash('sha256').update(body).digest('hex')}`,
    eventType: headerType ?? text(obj.eventType) ?? 'unknown',
  };
}

/** The headers worth keeping with the event: the service's own, plus content-type. */
export function keptHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    if (k.startsWith('x-service-') || k === 'content-type') out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
