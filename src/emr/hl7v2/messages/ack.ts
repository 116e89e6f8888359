// Acknowledgments, both ways (original acknowledgment mode). readAck reads the EMR's answer to what the adapter
// sent: AA/CA done, AE/CE a refusal of that message (a dead letter holding the ERR text), AR/CR an outage (sent
// again, same MSH-10). buildAck writes the adapter's answer to what the EMR sent, with an ERR segment naming
// the field for an AE.
//
// | field  | read / written                                                                      |
// |--------|-------------------------------------------------------------------------------------|
// | MSA-1  | acknowledgment code                                                                 |
// | MSA-2  | the acknowledged message's MSH-10                                                   |
// | MSA-3  | text (deprecated in 2.5.1, still the only text older engines read or write)         |
// | ERR-1  | read only: the v2.3/2.4 error code and location (ELD: seg^seq^field^code&text)      |
// | ERR-2  | location (ERL): `TXA^1^12`                                                          |
// | ERR-3  | HL7 error code (CWE): `101^Required field missing^HL70357`                          |
// | ERR-4  | severity `E`                                                                        |
// | ERR-8  | user message: what is wrong, in words                                               |
import { type AckCode, Hl7Field, type Hl7Message, type Hl7Segment } from '@medplum/core';
import { segment } from './compose.ts';
import { escapeValue } from './escape.ts';
import { subcomponents, value } from './read.ts';
import { accept, ERROR_TEXT, type Read, type Refusal, refuse } from './refusal.ts';
import { hl7Now } from './time.ts';

const ACK_CODES = new Set<string>(['AA', 'AE', 'AR', 'CA', 'CE', 'CR']);

export interface AckRead {
  code: AckCode;
  /** accepted: done. refused: this message will never be taken (dead letter). rejected: try again later. */
  outcome: 'accepted' | 'refused' | 'rejected';
  /** MSA-2: the MSH-10 this answers. */
  controlId: string;
  /** The ERR segments' texts (with the field they name), else MSA-3; absent when the EMR gave none. */
  text?: string;
}

const OUTCOME: Record<AckCode, AckRead['outcome']> = {
  AA: 'accepted',
  CA: 'accepted',
  AE: 'refused',
  CE: 'refused',
  AR: 'rejected',
  CR: 'rejected',
};

export function readAck(message: Hl7Message): Read<AckRead> {
  const msa = message.getSegment('MSA');
  if (!msa) return refuse('MSA', 1, '100', 'the acknowledgment has no MSA segment');
  const code = value(msa, 1).toUpperCase();
  if (!ACK_CODES.has(code)) return refuse('MSA', 1, '103', `MSA-1 "${code}" is not an acknowledgment code`);
  const texts = message.getAllSegments('ERR').map(errText).filter(Boolean);
  const text = texts.length ? texts.join('; ') : value(msa, 3);
  const ack = code as AckCode;
  return accept({ code: ack, outcome: OUTCOME[ack], controlId: value(msa, 2), ...(text ? { text } : {}) });
}

/** One ERR segment in words: `TXA-12: <ERR-8, else ERR-3's text or code, else ERR-1's>`. */
function errText(err: Hl7Segment): string {
  // ERR-1 (v2.3/2.4) carries its code as a CE written in subcomponents: code&text.
  const eld = subcomponents(err, 1, 4);
  const text = value(err, 8) || value(err, 3, 2) || value(err, 3, 1) || eld[1] || eld[0] || '';
  const where = place(err, 2) || place(err, 1);
  return where ? `${where}: ${text || 'error'}` : text;
}

/** An ERL (ERR-2) or ELD (ERR-1) location as people write it: `TXA-12`. */
function place(err: Hl7Segment, field: number): string {
  const seg = value(err, field, 1);
  const position = value(err, field, 3);
  return seg && position ? `${seg}-${position}` : '';
}

export interface AckOptions {
  /** The ACK's own MSH-10. */
  controlId: string;
  /** The injected clock's reading, ms since the epoch: MSH-7. */
  now: number;
  /** For AE (and AR): the field that could not be used, or the adapter's own failure (code 207). */
  error?: Refusal;
}

/**
 * The ACK for a received message: Hl7Message.buildAck (sender and receiver swapped, `ACK^<trigger>^ACK`, MSA-2
 * the message's MSH-10, its version echoed), with MSH-7 and MSH-10 replaced by the caller's, since buildAck
 * reads the wall clock for both. With an error: MSA-3 its text and an ERR segment.
 */
export function buildAck(message: Hl7Message, code: AckCode, opts: AckOptions): { message: Hl7Message; text: string } {
  const ctx = message.context;
  const e = opts.error;
  const errSegment = e
    ? segment(
        'ERR',
        ['', [e.location.segment, String(e.location.sequence), String(e.location.position)], [e.code, ERROR_TEXT[e.code], 'HL70357'], 'E', '', '', '', e.text],
        ctx,
      )
    : undefined;
  const ack = message.buildAck({ ackCode: code, ...(errSegment ? { errSegment } : {}) });
  const msh = ack.getSegment('MSH')!;
  msh.setField(7, new Hl7Field([[hl7Now(opts.now)]], ctx));
  msh.setField(10, new Hl7Field([[escapeValue(opts.controlId, ctx)]], ctx));
  if (e) ack.getSegment('MSA')!.setField(3, new Hl7Field([[escapeValue(e.text, ctx)]], ctx));
  return { message: ack, text: ack.toString() };
}
