// The small HL7 v2 vocabulary the bundled EMR builds and reads messages with, on top of @medplum/core's
// Hl7Message (which parses, holds and serialises them; @medplum/hl7 frames them): escaping of values,
// segments from field texts, the MSH of what it sends, timestamps from its clock and unique MSH-10s.
import { randomBytes } from 'node:crypto';
import { formatHl7DateTime, Hl7Message, Hl7Segment, type Hl7Field } from '@medplum/core';
import type { Clock } from '../clock.ts';

/** Who the EMR is in MSH-3/4, and whom its messages are for in MSH-5/6 (the adapter's defaults). */
export const EMR_HEADER = { application: 'EMR', facility: 'HOSPITAL', peerApplication: 'EMR-BRIDGE', peerFacility: 'SERVICE' } as const;

const ESCAPES: Record<string, string> = { '\\': '\\E\\', '|': '\\F\\', '^': '\\S\\', '&': '\\T\\', '~': '\\R\\' };
const UNESCAPES: Record<string, string> = { E: '\\', F: '|', S: '^', T: '&', R: '~' };

/** A value made safe for one component (the default separators `|^~\&`). */
export const escapeValue = (value: string): string => value.replace(/[\\|^&~]/g, (c) => ESCAPES[c]!);

/** A component's text with the separator escapes undone. */
export const unescapeValue = (text: string): string => text.replace(/\\([EFSTR])\\/g, (_m, c: string) => UNESCAPES[c]!);

/** Component texts joined into one field (each value escaped; trailing empty components dropped). */
export function components(...values: (string | undefined)[]): string {
  const texts = values.map((v) => escapeValue(v ?? ''));
  while (texts.length > 1 && texts.at(-1) === '') texts.pop();
  return texts.join('^');
}

/** Field texts (already built) as repetitions of one field. */
export const repetitions = (...fields: string[]): string => fields.filter((f) => f !== '').join('~');

/** A segment from its name and the texts of fields 1, 2, … (empty or undefined for an empty field). */
export const segment = (name: string, ...fields: (string | undefined)[]): Hl7Segment => new Hl7Segment([name, ...fields.map((f) => f ?? '')]);

/** A segment from its name and its non-empty fields by position: `segmentAt('PID', { 3: ids, 5: name })`. */
export function segmentAt(name: string, fields: Record<number, string | undefined>): Hl7Segment {
  const last = Math.max(0, ...Object.keys(fields).map(Number));
  return segment(name, ...Array.from({ length: last }, (_v, i) => fields[i + 1]));
}

/** One component of a field (1-based), unescaped; '' when absent. `repetition` is 0-based. */
export const componentOf = (field: Hl7Field | undefined, component: number, repetition = 0): string =>
  unescapeValue(field?.getComponent(component, undefined, repetition) ?? '');

/** How many repetitions a field has (0 for an empty field). */
export const repetitionCount = (field: Hl7Field | undefined): number => (field && field.toString() !== '' ? field.components.length : 0);

/** HL7 DTM of an instant in UTC, to the second: `YYYYMMDDHHMMSS+0000`. */
export const hl7Time = (ms: number): string => `${formatHl7DateTime(new Date(Math.floor(ms / 1000) * 1000))}+0000`;

/** MSH-10s unique across restarts: a start stamp (time and random) and a counter, 20 characters at most. */
export function createControlIds(clock: Clock): () => string {
  const stamp = `${clock.now().toString(36).slice(-8)}${randomBytes(2).toString('hex')}`.toUpperCase();
  let n = 0;
  return () => `E${stamp}${(++n).toString(36).toUpperCase().padStart(7, '0')}`;
}

export interface Header {
  /** MSH-9, e.g. `ADT^A28^ADT_A05`. */
  type: string;
  controlId: string;
  at: number;
  /** MSH-3/4/5/6; default EMR_HEADER. */
  from?: { application: string; facility: string };
  to?: { application: string; facility: string };
}

/** The MSH of a message the EMR sends (HL7 v2.5.1, production, original acknowledgment mode). */
export function msh(h: Header): Hl7Segment {
  const from = h.from ?? { application: EMR_HEADER.application, facility: EMR_HEADER.facility };
  const to = h.to ?? { application: EMR_HEADER.peerApplication, facility: EMR_HEADER.peerFacility };
  // MSH-2 is the encoding characters, so the array starts at MSH-2 (as Hl7Message.buildAck builds it).
  return new Hl7Segment(['MSH', '^~\\&', from.application, from.facility, to.application, to.facility, hl7Time(h.at), '', h.type, h.controlId, 'P', '2.5.1']);
}

export const message = (header: Header, ...segments: Hl7Segment[]): Hl7Message => new Hl7Message([msh(header), ...segments]);

/** MSH-9's type and trigger (`ADT^A28`), MSH-10, and the sender (MSH-3, MSH-4) of a received message. */
export function headerOf(msg: Hl7Message): { type: string; trigger: string; controlId: string; sender: { application: string; facility: string } } {
  const h = msg.getSegment('MSH');
  return {
    type: componentOf(h?.getField(9), 1),
    trigger: componentOf(h?.getField(9), 2),
    controlId: h?.getField(10)?.toString() ?? '',
    sender: { application: componentOf(h?.getField(3), 1), facility: componentOf(h?.getField(4), 1) },
  };
}
