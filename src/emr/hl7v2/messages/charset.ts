// A received message's bytes as text, in the character set its MSH-18 names. The separators and MSH are ASCII
// in every set HL7 allows here, so MSH-18 is read from the bytes before the text is decoded. An undeclared
// set is read as UTF-8 (a superset of HL7's default ASCII); bytes that are not valid UTF-8 are refused naming
// MSH-18 rather than guessed at, so a wrong name never reaches a patient's record silently.
import { accept, type Read, refuse } from './refusal.ts';

export interface DecodedMessage {
  text: string;
  /** The Node/WHATWG name of the character set used: `utf-8`, `latin1`, `iso-8859-2`, … */
  charset: string;
}

/** MSH-18 (HL7 table 0211) → decoder label. 8859/1 is decoded by Buffer: TextDecoder's "iso-8859-1" is windows-1252. */
function charsetOf(msh18: string): string | undefined {
  const name = msh18.trim().toUpperCase();
  if (name === '' || name === 'ASCII' || name === 'UNICODE UTF-8') return 'utf-8';
  if (name === '8859/1') return 'latin1';
  const m = /^8859\/(\d{1,2})$/.exec(name);
  return m ? `iso-8859-${m[1]}` : undefined;
}

export function decodeMessageBytes(bytes: Uint8Array): Read<DecodedMessage> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = buf.findIndex((b) => b === 0x0d || b === 0x0a);
  if (end < 0) end = buf.length;
  const msh = buf.toString('latin1', 0, end);
  if (!msh.startsWith('MSH') || msh.length < 8) return refuse('MSH', 1, '100', 'the message does not start with an MSH segment');
  // MSH-n is the (n-1)th piece when split on MSH-1, which itself is not a piece; MSH-18 may repeat (MSH-2's second character).
  const msh18 = (msh.split(msh[3]!)[17] ?? '').split(msh[5]!)[0]!;
  const charset = charsetOf(msh18);
  if (!charset) return refuse('MSH', 18, '103', `character set "${msh18}" is not one the adapter reads`);
  if (charset === 'latin1') return accept({ text: buf.toString('latin1'), charset });
  const decoder = decoderFor(charset);
  if (!decoder) return refuse('MSH', 18, '103', `character set "${msh18}" is not one the adapter reads`);
  try {
    return accept({ text: decoder.decode(buf), charset });
  } catch {
    return refuse('MSH', 18, '102', `the message is not valid ${msh18.trim() || 'UTF-8 (MSH-18 names no character set)'}`);
  }
}

function decoderFor(charset: string) {
  try {
    return new TextDecoder(charset, { fatal: true });
  } catch {
    return undefined;
  }
}
