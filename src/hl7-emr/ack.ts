// The EMR's acknowledgments, original mode: MSA-1 AA, AE or AR, MSA-2 the received MSH-10, and for a
// refusal an ERR segment naming the field at fault (ERR-2 location, ERR-3 code from HL7 table 0357, ERR-8 text).
import type { Hl7Message } from '@medplum/core';
import type { AckCode } from './model.ts';
import { components, headerOf, message, segment } from './hl7-text.ts';

/** Why a message was refused: where (e.g. PID-3) and what HL7 table 0357 calls it. */
export interface Refusal {
  /** `SEG-n`, e.g. `PID-3`, `SCH-1`, `MSH-9`; '' when no one field is at fault (an injected fault). */
  field: string;
  /** Table 0357: 101 required field missing, 200/201 unsupported message type/event, 204 unknown key, 207 application error. */
  code: '101' | '200' | '201' | '204' | '207';
  text: string;
}

const CODE_TEXT: Record<Refusal['code'], string> = {
  '101': 'Required field missing',
  '200': 'Unsupported message type',
  '201': 'Unsupported event code',
  '204': 'Unknown key identifier',
  '207': 'Application internal error',
};

/** ERR-2 (ERL): segment ID, sequence 1, field position. */
function location(field: string): string {
  if (!field) return '';
  const [seg, position] = field.split('-');
  return components(seg, '1', position);
}

const textOf = (r: Refusal): string => (r.field ? `${r.field}: ${r.text}` : r.text);

export interface AckInput {
  received: Hl7Message;
  code: AckCode;
  refusal?: Refusal;
  controlId: string;
  at: number;
}

export function buildAck({ received, code, refusal, controlId, at }: AckInput): Hl7Message {
  const h = headerOf(received);
  const msa = segment('MSA', code, received.getSegment('MSH')?.getField(10)?.toString() ?? '', refusal ? components(textOf(refusal)) : undefined);
  const segments = [msa];
  if (refusal)
    segments.push(
      segment('ERR', '', location(refusal.field), components(refusal.code, CODE_TEXT[refusal.code], 'HL70357'), 'E', '', '', '', components(textOf(refusal))),
    );
  const to = h.sender.application || h.sender.facility ? h.sender : undefined;
  return message({ type: components('ACK', h.trigger, 'ACK'), controlId, at, ...(to ? { to } : {}) }, ...segments);
}
