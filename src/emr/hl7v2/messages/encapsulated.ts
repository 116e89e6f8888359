// The file inside a document message: the first OBX whose value type (OBX-2) is ED, its OBX-5 an encapsulated
// data value. The contract's form is `^application^pdf^Base64^<data>` (a MIME type and subtype in ED.2 and
// ED.3); the HL7 table form `^AP^PDF^Base64^<data>` (table 0191 type, 0291 subtype) is read too. The data is
// Base64 (or Hex, turned into Base64); the service itself judges the file by its leading bytes.
//
// | OBX-5 (ED) | meaning                                  |
// |------------|------------------------------------------|
// | 1          | source application (ignored)             |
// | 2          | type: a MIME type, or AP / IM / TEXT / AU |
// | 3          | subtype: `pdf`, `PDF`, `jpeg`, …          |
// | 4          | encoding: `Base64` (or `Hex`)            |
// | 5          | the data                                 |
import type { Hl7Message } from '@medplum/core';
import { value } from './read.ts';
import { accept, type Read, refuse } from './refusal.ts';

export interface EncapsulatedFile {
  base64: string;
  mimeType: string;
  /** A file name extension for the MIME subtype: `pdf`, `jpg`, … */
  extension: string;
}

const TABLE_TYPES: Record<string, string> = { AP: 'application', IM: 'image', IMAGE: 'image', TEXT: 'text', TX: 'text', AU: 'audio', AUDIO: 'audio' };
const MIME_TYPES = new Set(['application', 'image', 'text', 'audio', 'video', 'model', 'font', 'multipart']);
const EXTENSIONS: Record<string, string> = { jpeg: 'jpg', plain: 'txt', 'svg+xml': 'svg', 'octet-stream': 'bin' };
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function readEncapsulatedFile(message: Hl7Message): Read<EncapsulatedFile> {
  const obxs = message.getAllSegments('OBX');
  const index = obxs.findIndex((obx) => value(obx, 2).toUpperCase() === 'ED');
  if (index < 0) return refuse('OBX', 5, '101', 'no OBX of value type ED carries the document');
  const obx = obxs[index]!;
  const bad = (text: string) => refuse<EncapsulatedFile>('OBX', 5, '102', text, index + 1);

  const type = value(obx, 5, 2).trim();
  const subtype = value(obx, 5, 3).trim().toLowerCase();
  const major = TABLE_TYPES[type.toUpperCase()] ?? (MIME_TYPES.has(type.toLowerCase()) ? type.toLowerCase() : undefined);
  const mimeType = major && subtype ? `${major}/${subtype}` : 'application/octet-stream';

  // Line breaks some engines wrap Base64 with arrive escaped (\X0D\\X0A\) and are unescaped by value().
  const data = value(obx, 5, 5).replace(/\s+/g, '');
  if (!data) return refuse('OBX', 5, '101', 'OBX-5 (ED.5) holds no data', index + 1);
  const encoding = value(obx, 5, 4).trim().toUpperCase();
  let base64: string;
  if (encoding === 'BASE64') {
    if (!BASE64.test(data)) return bad('OBX-5 (ED.5) is not valid Base64');
    base64 = data;
  } else if (encoding === 'HEX') {
    if (!/^(?:[0-9A-Fa-f]{2})+$/.test(data)) return bad('OBX-5 (ED.5) is not valid Hex');
    base64 = Buffer.from(data, 'hex').toString('base64');
  } else {
    return bad(`OBX-5 encoding (ED.4) "${value(obx, 5, 4)}" is not Base64 or Hex`);
  }
  const extension = subtype ? (EXTENSIONS[subtype] ?? subtype.replace(/[^a-z0-9]/g, '')) : 'bin';
  return accept({ base64, mimeType, extension: extension || 'bin' });
}
