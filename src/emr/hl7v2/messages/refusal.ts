// What a reader answers: the value it read, or a refusal naming the field it could not use. A refusal carries
// what the listener's AE needs for its ERR segment (ERR-2 location, ERR-3 code, ERR-8 text), so the EMR's
// interface engine shows its people which field of which message to fix.

/** HL7 table 0357 (message error condition codes), the ones the readers use. */
export type Hl7ErrorCode =
  /** Segment sequence error: a segment the message type needs is missing. */
  | '100'
  /** Required field missing. */
  | '101'
  /** Data type error: the field is there but not usable (bad base64, unknown encoding). */
  | '102'
  /** Table value not found: a code the adapter was not configured for (TXA-2). */
  | '103'
  /** Unsupported message type. */
  | '200'
  /** Unsupported event code. */
  | '201'
  /** Application internal error: the adapter's own store failed (with AR). */
  | '207';

export const ERROR_TEXT: Record<Hl7ErrorCode, string> = {
  '100': 'Segment sequence error',
  '101': 'Required field missing',
  '102': 'Data type error',
  '103': 'Table value not found',
  '200': 'Unsupported message type',
  '201': 'Unsupported event code',
  '207': 'Application internal error',
};

export interface Refusal {
  /** The field as people write it: `TXA-12`. */
  field: string;
  /** ERR-2 (ERL): segment id, its sequence among segments of that name (1-based), field position. */
  location: { segment: string; sequence: number; position: number };
  code: Hl7ErrorCode;
  /** For ERR-8 and the log: what is wrong, in words. */
  text: string;
}

export type Read<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export const accept = <T>(value: T): Read<T> => ({ ok: true, value });

export function refuse<T>(segment: string, position: number, code: Hl7ErrorCode, text: string, sequence = 1): Read<T> {
  return { ok: false, refusal: { field: `${segment}-${position}`, location: { segment, sequence, position }, code, text } };
}
