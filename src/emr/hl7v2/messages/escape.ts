// HL7 v2 escaping (v2.5.1 chapter 2.7) of every value the adapter writes into a message, and its reverse for
// every value it reads. Hl7Message (@medplum/core) splits on the separators but neither escapes nor unescapes,
// so the builders escape each leaf value exactly once and the readers unescape each leaf exactly once, after
// the split (unescaping before it would turn `\S\` into a separator).
import { Hl7Context } from '@medplum/core';

const DEFAULT = new Hl7Context();

/**
 * Separators become `\F\ \S\ \T\ \R\ \E\`. Control characters (CR and LF in notes above all) become `\Xhh\`
 * rather than being dropped: the text arrives as written, and a raw CR would end the segment and a raw 0x0B or
 * 0x1C would break the MLLP frame. Tab is kept (harmless in a field). One pass per character, so the escape
 * character's own `\E\` is never escaped again.
 */
export function escapeValue(value: string, ctx: Hl7Context = DEFAULT): string {
  const e = ctx.escapeCharacter;
  const named: Record<string, string> = {
    [e]: 'E',
    [ctx.fieldSeparator]: 'F',
    [ctx.componentSeparator]: 'S',
    [ctx.subcomponentSeparator]: 'T',
    [ctx.repetitionSeparator]: 'R',
  };
  let out = '';
  for (const ch of value) {
    const name = named[ch];
    if (name) out += `${e}${name}${e}`;
    else if (isControl(ch)) out += `${e}X${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${e}`;
    else out += ch;
  }
  return out;
}

function isControl(ch: string): boolean {
  const code = ch.charCodeAt(0);
  return (code < 0x20 && ch !== '\t') || code === 0x7f;
}

/**
 * The reverse, for one component or subcomponent as Hl7Message hands it over. `\Xhh…\` is read as UTF-8 when
 * its bytes are valid UTF-8, else one byte per character (ISO-8859-1). Formatting (`\.br\`, `\.sp\`) becomes a
 * line break, other formatting, highlighting (`\H\ \N\`) and character-set switches (`\C…\ \M…\`) are dropped;
 * an unknown or unclosed sequence is kept as it stands rather than guessed at.
 */
export function unescapeValue(value: string, ctx: Hl7Context = DEFAULT): string {
  const e = ctx.escapeCharacter;
  if (!value.includes(e)) return value;
  let out = '';
  let i = 0;
  while (i < value.length) {
    const start = value.indexOf(e, i);
    const end = start < 0 ? -1 : value.indexOf(e, start + 1);
    if (start < 0 || end < 0) {
      out += value.slice(i);
      break;
    }
    out += value.slice(i, start);
    const seq = value.slice(start + 1, end);
    const decoded = decodeSequence(seq, ctx);
    out += decoded ?? value.slice(start, end + 1);
    i = end + 1;
  }
  return out;
}

function decodeSequence(seq: string, ctx: Hl7Context): string | undefined {
  switch (seq) {
    case 'F':
      return ctx.fieldSeparator;
    case 'S':
      return ctx.componentSeparator;
    case 'T':
      return ctx.subcomponentSeparator;
    case 'R':
      return ctx.repetitionSeparator;
    case 'E':
      return ctx.escapeCharacter;
    case '.br':
    case '.sp':
      return '\n';
    case 'H':
    case 'N':
      return '';
  }
  if (/^X([0-9A-Fa-f]{2})+$/.test(seq)) return decodeHex(seq.slice(1));
  if (/^[CM][0-9A-Fa-f]+$/.test(seq) || /^\.[a-z]{2}[+-]?\d*$/.test(seq)) return '';
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeHex(hex: string): string {
  const bytes = Uint8Array.from(hex.match(/../g)!, (h) => Number.parseInt(h, 16));
  try {
    return utf8.decode(bytes);
  } catch {
    return String.fromCharCode(...bytes);
  }
}
