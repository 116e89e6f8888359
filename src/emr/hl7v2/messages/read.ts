// Reading a received message: parsing its text, and values out of it, each unescaped exactly once (Hl7Message
// itself never unescapes). The accessors never throw: an absent segment, field, repetition or component reads
// as '' (Hl7Field.getComponent throws on a repetition that is not there, hence the guard).
import { Hl7Message, type Hl7Segment } from '@medplum/core';
import { unescapeValue } from './escape.ts';
import { accept, type Read, refuse } from './refusal.ts';

/**
 * The text of one message (MLLP frame removed, already decoded: ./charset.ts) as an Hl7Message. Line feeds are
 * taken as segment ends too (Hl7Message.parse does), and trailing ones are dropped so they make no empty segment.
 */
export function parseMessage(text: string): Read<Hl7Message> {
  const trimmed = text.replace(/^[\r\n]+|[\r\n]+$/g, '');
  if (!trimmed.startsWith('MSH')) return refuse('MSH', 1, '100', 'the message does not start with an MSH segment');
  const separators = trimmed.slice(3, 8);
  if (separators.length < 5 || new Set(separators).size !== 5 || /[\sA-Za-z0-9]/.test(separators)) {
    return refuse('MSH', 2, '102', 'MSH-1 and MSH-2 do not name five distinct separator characters');
  }
  return accept(Hl7Message.parse(trimmed));
}

/** A component's raw text (still escaped), or '' when any part of the path is absent. */
export function rawComponent(seg: Hl7Segment | undefined, field: number, component = 1, repetition = 0): string {
  const f = seg?.getField(field);
  if (!f || repetition >= f.components.length) return '';
  return f.getComponent(component, undefined, repetition);
}

/** A component's value, unescaped. A component with subcomponents comes back whole: see subcomponents(). */
export function value(seg: Hl7Segment | undefined, field: number, component = 1, repetition = 0): string {
  return seg ? unescapeValue(rawComponent(seg, field, component, repetition), seg.context) : '';
}

/** A component's subcomponents, each unescaped (the HD inside a CX, the surname inside an XPN). */
export function subcomponents(seg: Hl7Segment | undefined, field: number, component = 1, repetition = 0): string[] {
  if (!seg) return [];
  return rawComponent(seg, field, component, repetition)
    .split(seg.context.subcomponentSeparator)
    .map((s) => unescapeValue(s, seg.context));
}

export function repetitionCount(seg: Hl7Segment | undefined, field: number): number {
  return seg?.getField(field)?.components.length ?? 0;
}

/** `ADT^A28`: MSH-9 message code and trigger event (the structure, MSH-9.3, left off). */
export function messageType(message: Hl7Message): string {
  const msh = message.getSegment('MSH');
  return `${value(msh, 9, 1)}^${value(msh, 9, 2)}`;
}

/** What makes a received message the same message again: its sender and its control id. */
export interface MessageKey {
  /** MSH-3 as it stands (escapes and components included: a resent message repeats it byte for byte). */
  sendingApplication: string;
  /** MSH-4, likewise. */
  sendingFacility: string;
  /** MSH-10. */
  controlId: string;
}

export function messageKey(message: Hl7Message): Read<MessageKey> {
  const msh = message.getSegment('MSH');
  const controlId = value(msh, 10);
  if (!controlId) return refuse('MSH', 10, '101', 'MSH-10 (message control id) is empty');
  return accept({ sendingApplication: msh?.getField(3)?.toString() ?? '', sendingFacility: msh?.getField(4)?.toString() ?? '', controlId });
}

/**
 * Whether an HD (given as its parts: namespace id, universal id, type) names this assigning authority: by
 * its namespace id, or by its universal id for an engine that writes only the OID.
 */
export function namesAuthority(hd: readonly string[], authority: string): boolean {
  return Boolean(authority) && (hd[0] === authority || hd[1] === authority);
}
