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

/** The appointment.created sample padded to BODY_BYTES, split around its eventId (a UUID: 36 characters, so every body has the same size). */
function bodyTemplate(): { before: string; after: string; eventType: string } {
  const marker = '00000000-0000-4000-8000-00000000mark';
  const event = appointmentEvent({ appointmentId: 'apt_bench_wrk' });
  event.eventId = marker;
  const size = Buffer.byteLength(JSON.stringify(event));
  event.appointment.notes = `${event.appointment.notes}${'n'.repeat(Math.max(0, BODY_BYTES - size))}`;
  const json = JSON.stringify(event);
  const at = json.indexOf(marker);
  return { before: json.slice(0, at), after: json.slice(at + marker.length), eventType: String(event.eventType) };
}

/**
 * Writes `count` deliveries in the Lua script's format (a line of header names, then a line per delivery:
 * header values and body, tab-separated). Every eventId is new (randomUUID).
 */
export function writeRequestsFile(path: string, count: number, signing: Signing): void {
  const { before, after, eventType } = bodyTemplate();
  const timestamp = Math.floor(Date.now() / 1000);
  const fd = openSync(path, 'w');
  try {
    let names: string[] | undefined;
    let chunk: string[] = [];
    for (let i = 0; i < count; i++) {
      const eventId = randomUUID();
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
