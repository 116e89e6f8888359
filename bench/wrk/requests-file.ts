// The deliveries bench/wrk/webhooks.lua sends: unique appointment.created bodies of 1.5 KB, each signed as
// the service signs it (signedWebhookHeaders: content-type and the six x-service-* headers). Signatures
// hold for ±300 s, so a file is written just before the run that uses it.
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { signedWebhookHeaders } from '../../src/signature/webhook-signature.ts';
import { appointmentEvent } from '../support/events.ts';

export const BODY_BYTES = 1536;

export interface Signing {
  keyId: string;
  secrets: readonly string[];
}

/** Stands for the appointment's id in the template (and in its patient's, `pat_` + it): 32 characters, as a fresh one's. */
const ENTITY_MARKER = 'X'.repeat(32);

/**
 * The appointment.created sample padded to BODY_BYTES, split around its eventId (a UUID: 36 characters, so every
 * body has the same size). `after` holds ENTITY_MARKER where the appointment's id goes.
 */
function bodyTemplate(): { before: string; after: string; eventType: string } {
  const marker = '00000000-0000-4000-8000-00000000mark';
  const event = appointmentEvent({ appointmentId: `apt_${ENTITY_MARKER}` });
  event.eventId = marker;
  const size = Buffer.byteLength(JSON.stringify(event));
  event.appointment.notes = `${event.appointment.notes}${'n'.repeat(Math.max(0, BODY_BYTES - size))}`;
  const json = JSON.stringify(event);
  const at = json.indexOf(marker);
  return { before: json.slice(0, at), after: json.slice(at + marker.length), eventType: String(event.eventType) };
}

/**
 * Whose appointment each delivery books: `one` (the receiver's runs: every delivery the same appointment, which
 * a processor at work would apply once and find stale after), or `distinct` (an appointment and a patient of its
 * own each, as a backlog after an outage: every delivery is work for the processor).
 */
export type Entities = 'one' | 'distinct';

/**
 * Writes `count` deliveries in the Lua script's format (a line of header names, then a line per delivery:
 * header values and body, tab-separated). Every eventId is new (randomUUID).
 */
export function writeRequestsFile(path: string, count: number, signing: Signing, entities: Entities = 'one'): void {
  const { before, after: template, eventType } = bodyTemplate();
  const parts = template.split(ENTITY_MARKER);
  const one = parts.join('bench_wrk'.padEnd(32, '0'));
  const timestamp = Math.floor(Date.now() / 1000);
  const fd = openSync(path, 'w');
  try {
    let names: string[] | undefined;
    let chunk: string[] = [];
    for (let i = 0; i < count; i++) {
      const eventId = randomUUID();
      const after = entities === 'one' ? one : parts.join(randomUUID().replaceAll('-', ''));
      const body = `${before}${eventId}${after}`;
      const headers = signedWebhookHeaders({
        keyId: signing.keyId,
        secrets: signing.secrets,
        timestamp,
        body: Buffer.from(body),
        eventId,
        eventType,
        attempt: 1,
      });
      if (!names) {
        names = Object.keys(headers);
        chunk.push(names.join('\t'));
      }
      const values = names.map((n) => headers[n]!);
      if (values.some((v) => /[\t\n]/.test(v)) || /[\t\n]/.test(body)) throw new Error('a tab or newline in a delivery: the Lua format cannot hold it');
      chunk.push(`${values.join('\t')}\t${body}`);
      if (chunk.length >= 2000) {
        writeSync(fd, `${chunk.join('\n')}\n`);
        chunk = [];
      }
    }
    if (chunk.length) writeSync(fd, `${chunk.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
}
