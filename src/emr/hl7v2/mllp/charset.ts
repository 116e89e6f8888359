// Which character set a message is in, from its MSH-18, and turning a frame's bytes into text with it.
// Frames are read as latin1 first (one char per byte, so nothing is lost) because the charset is only
// known once MSH has been read; MSH itself is ASCII in every charset we take.
import { Hl7CharsetError } from './errors.ts';

/** The encodings we read and write, as Node (and iconv-lite) name them. */
export type MessageEncoding = 'utf-8' | 'latin1';

// HL7 table 0211. ASCII is a subset of UTF-8; a message declaring nothing is UTF-8 by this contract.
// Anything else (other 8859 parts, UTF-16, JIS, ...) is refused rather than read as something it is not.
const ENCODINGS: Readonly<Record<string, MessageEncoding>> = {
  '': 'utf-8',
  ASCII: 'utf-8',
  'UNICODE UTF-8': 'utf-8',
  '8859/1': 'latin1',
};

// fatal: a name with U+FFFD in it would be stored wrongly for good; refusing lets the sender fix it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** MSH-18 of a message's text (its first repetition, trimmed, upper case), '' when absent. */
export function declaredCharset(text: string): string {
  if (!text.startsWith('MSH') || text.length < 8) return '';
  const fieldSep = text[3]!;
  const repetitionSep = text[5] ?? '~';
  const end = text.search(/[\r\n]/);
  const msh = end === -1 ? text : text.slice(0, end);
  // fields[0] is 'MSH' and MSH-1 is the separator itself, so MSH-n sits at fields[n - 1].
  const msh18 = msh.split(fieldSep)[17] ?? '';
  return (msh18.split(repetitionSep)[0] ?? '').trim().toUpperCase();
}

/** The encoding a message's text declares; throws Hl7CharsetError for one we do not take. */
export function encodingOf(text: string): MessageEncoding {
  const declared = declaredCharset(text);
  const encoding = ENCODINGS[declared];
  if (encoding === undefined) throw new Hl7CharsetError(declared, `unsupported character set in MSH-18: ${declared}`);
  return encoding;
}

/** A frame's content (without VT, FS, CR) as text, decoded as its MSH-18 says. */
export function decodeFrame(bytes: Buffer): string {
  const encoding = encodingOf(bytes.toString('latin1'));
  if (encoding === 'latin1') return bytes.toString('latin1');
  try {
    return utf8.decode(bytes);
  } catch {
    throw new Hl7CharsetError(declaredCharset(bytes.toString('latin1')), 'message bytes are not valid UTF-8');
  }
}
