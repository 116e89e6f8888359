// The attribute rule: a span carries identifiers only. The list of keys names none that could hold a name, phone,
// label, body or token (the words the logs redact), the code uses no key off the list, and at run time a key off
// it is dropped and a text that is no identifier replaced.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SENSITIVE_KEYS } from '../../src/logger.ts';
import { ATTRIBUTE_KEYS, allowedAttributes, REFUSED_VALUE, type SpanAttributes } from '../../src/tracing/attributes.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Words a key must not hold: the logs' redacted keys, split into words, and a few more of the same kind. */
const FORBIDDEN = new Set([
  // patientName: patient, name; a header (x-service-signature): its last word.
  ...SENSITIVE_KEYS.flatMap((k) =>
    k.includes('-')
      ? [k.split('-').pop()!]
      : k
          .replace(/([a-z])([A-Z])/g, '$1_$2')
          .toLowerCase()
          .split('_'),
  ),
  'password',
  'key',
  'address',
  'email',
  'birth',
  'dob',
  'content',
  'message',
  'reason',
  'header',
  'headers',
  'url',
  'query',
]);
/** Keys that hold one of those words as an identifier's name: an HL7 v2 message's type and control id (MSH-9, MSH-10). */
const HL7_MESSAGE = new Set(['hl7.message_type', 'hl7.message_control_id']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the attributes a span may carry', () => {
  it('name no word the logs redact (name, phone, label, body, token, ...) nor any like them', () => {
    for (const key of Object.keys(ATTRIBUTE_KEYS)) {
      const words = key.split(/[._]/).filter((w) => !(HL7_MESSAGE.has(key) && w === 'message'));
      expect(
        words.filter((w) => FORBIDDEN.has(w)),
        key,
      ).toEqual([]);
    }
    expect(FORBIDDEN).toContain('name');
    expect(FORBIDDEN).toContain('phone');
    expect(FORBIDDEN).toContain('label');
    expect(FORBIDDEN).toContain('body');
    expect(FORBIDDEN).toContain('token');
  });

  it('are the only keys the code gives a span', () => {
    const used = new Map<string, string>();
    for (const file of sourceFiles(SRC)) {
      for (const m of readFileSync(file, 'utf8').matchAll(/'((?:emr_bridge|http|fhir|hl7|url|db|server|messaging|service|user)\.[a-z_.]+)'\s*:/g))
        used.set(m[1]!, file.slice(SRC.length + 1));
    }
    expect(used.size).toBeGreaterThan(15);
    const unknown = [...used].filter(([k]) => !(k in ATTRIBUTE_KEYS)).map(([k, f]) => `${k} (${f})`);
    // The resource's service.name and service.version are not span attributes.
    expect(unknown.filter((u) => !u.startsWith('service.'))).toEqual([]);
  });

  it('keep listed keys and identifier values, drop other keys, and replace text with white space in it', () => {
    const given = {
      'emr_bridge.event.id': '3f0c1f8e-7b1a-4a3b-9c51-2f6a1d0b9e11',
      'emr_bridge.emr.id': 'Patient/12',
      'hl7.message_type': 'SIU^S12',
      'http.response.status_code': 201,
      'emr_bridge.event.duplicate': false,
      'emr_bridge.service_id': 'Jane Doe',
      'emr_bridge.document.external_id': `x${'y'.repeat(300)}`,
      'emr_bridge.error.code': undefined,
      'patient.phone': '+15550001111',
      label: 'Blood panel',
    } as SpanAttributes;
    expect(allowedAttributes(given)).toEqual({
      'emr_bridge.event.id': '3f0c1f8e-7b1a-4a3b-9c51-2f6a1d0b9e11',
      'emr_bridge.emr.id': 'Patient/12',
      'hl7.message_type': 'SIU^S12',
      'http.response.status_code': 201,
      'emr_bridge.event.duplicate': false,
      'emr_bridge.service_id': REFUSED_VALUE,
      'emr_bridge.document.external_id': REFUSED_VALUE,
    });
  });
});
