// What the message tests share: a header context with a fixed clock, and a parse that fails the test loudly.
import type { Hl7Message } from '@medplum/core';
import type { HeaderContext } from '../../../../src/emr/hl7v2/messages/header.ts';
import { parseMessage } from '../../../../src/emr/hl7v2/messages/read.ts';
import type { Read } from '../../../../src/emr/hl7v2/messages/refusal.ts';

export const NOW = Date.parse('2026-02-01T09:00:00.000Z');

export const HEADER: HeaderContext = {
  sendingApplication: 'EMR-BRIDGE',
  sendingFacility: 'SERVICE',
  receivingApplication: 'EMR',
  receivingFacility: 'HOSPITAL',
  assigningAuthority: 'SERVICE',
  controlId: 'ctl-1',
  now: NOW,
};

export function parsed(text: string): Hl7Message {
  return value(parseMessage(text));
}

export function value<T>(read: Read<T>): T {
  if (!read.ok) throw new Error(`refused: ${read.refusal.field} ${read.refusal.text}`);
  return read.value;
}

/** The message's segments one per entry (split on CR), for expectations that read like the message. */
export const lines = (text: string): string[] => text.split('\r');
