// Turns a stored delivery into a validated event, or a reason it cannot be one: the one parse of a stored body,
// made by the stores' intake (src/storage/*/processing.ts), again by the processor only for an event another
// process took in (src/processor/handle-event.ts), and by replay to key its samples. Validation uses the zod
// schemas of ./events.ts (loose objects, open enumerations: unknown keys and values are kept).
import { isEventType, schemaForEventType, type AppointmentEvent, type WebhookEvent } from './events.ts';

export interface ParsedEvent {
  event: WebhookEvent;
  entityKey: string;
}

export type Parsed = ({ ok: true } & ParsedEvent) | { ok: false; reason: string };

export function entityKeyOf(event: WebhookEvent): string {
  if (event.eventType === 'patient.created') return `patient:${event.patient.serviceId}`;
  if (event.eventType === 'document.delivered' || event.eventType === 'document.failed') return `document:${event.document.externalId}`;
  return `appointment:${(event as AppointmentEvent).appointment.serviceId}`;
}

export function parseStoredEvent(body: Buffer | null, storedEventId: string): Parsed {
  if (!body) return { ok: false, reason: 'body_pruned: the stored body was pruned by retention' };
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed_json: the body is not valid JSON' };
  }
  const type = (json as { eventType?: unknown } | null)?.eventType;
  if (!isEventType(type)) return { ok: false, reason: `unknown_event_type: ${typeof type === 'string' ? type.slice(0, 60) : 'missing eventType'}` };
  const result = schemaForEventType(type).safeParse(json);
  if (!result.success) {
    const issues = result.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
    return { ok: false, reason: `invalid_event: ${issues.join('; ')}` };
  }
  const event = result.data as WebhookEvent;
  if (event.eventId !== storedEventId && !storedEventId.startsWith('sha256:'))
    return { ok: false, reason: 'event_id_mismatch: the body eventId differs from X-Service-Event-Id' };
  return { ok: true, event, entityKey: entityKeyOf(event) };
}
