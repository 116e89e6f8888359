// HL7 escaping: every separator and the escape character itself, control characters kept as \Xhh\, and the
// reverse; Hl7Message does not unescape, so values read once are read right and never twice.
import { Hl7Context, Hl7Message } from '@medplum/core';
import { describe, expect, it } from 'vitest';
import { escapeValue, unescapeValue } from '../../../../src/emr/hl7v2/messages/escape.ts';

describe('escapeValue', () => {
  it('escapes each separator and the escape character, the escape character without escaping its own escape', () => {
    expect(escapeValue('a|b^c&d~e\\f')).toBe('a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f');
    expect(escapeValue('\\F\\')).toBe('\\E\\F\\E\\');
  });

  it('writes CR, LF and the MLLP frame bytes as \\Xhh\\ so a note can neither end a segment nor a frame', () => {
    expect(escapeValue('one\r\ntwo')).toBe('one\\X0D\\\\X0A\\two');
    expect(escapeValue('\x0b\x1c')).toBe('\\X0B\\\\X1C\\');
  });

  it('leaves plain text, tabs and non-ASCII letters alone', () => {
    expect(escapeValue('Zoë Müller\tRoom 1')).toBe('Zoë Müller\tRoom 1');
  });

  it('uses the message context separators when they are not the defaults', () => {
    const ctx = new Hl7Context('\r', '#', '$', '*', '!', '%');
    expect(escapeValue('a#b$c*d!e%f', ctx)).toBe('a!F!b!S!c!R!d!E!e!T!f');
  });
});

describe('unescapeValue', () => {
  it('reverses escapeValue for any text', () => {
    const text = "O'Brien | Smith^Jones & Co ~ 50% \\ done\r\nnext line\x0b";
    expect(unescapeValue(escapeValue(text))).toBe(text);
  });

  it('reads \\Xhh\\ as UTF-8 when valid, else one byte per character', () => {
    expect(unescapeValue('Zo\\XC3AB\\')).toBe('Zoë');
    expect(unescapeValue('Zo\\XEB\\')).toBe('Zoë');
  });

  it('turns \\.br\\ into a line break and drops highlighting and character-set switches', () => {
    expect(unescapeValue('a\\.br\\b \\H\\bold\\N\\ \\C2842\\x')).toBe('a\nb bold x');
  });

  it('keeps an unknown or unclosed sequence as it stands', () => {
    expect(unescapeValue('a\\Q\\b')).toBe('a\\Q\\b');
    expect(unescapeValue('trailing \\F')).toBe('trailing \\F');
  });

  it('is needed: Hl7Message.parse hands values over still escaped', () => {
    const m = Hl7Message.parse('MSH|^~\\&|A|B\rNTE|1||x\\F\\y');
    expect(m.getSegment('NTE')?.getComponent(3, 1)).toBe('x\\F\\y');
    expect(unescapeValue(m.getSegment('NTE')!.getComponent(3, 1))).toBe('x|y');
  });
});
