// The samples QA replays: every file is a well-formed sample, every event body (but the deliberately
// malformed one) passes the zod schemas, and the JSON Schemas beside them match what the zod schemas
// generate now, so they cannot drift.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { webhookEventSchema } from '../../src/contract/events.ts';
import { labReportRequestSchema, prescriptionRequestSchema } from '../../src/contract/documents.ts';
import { jsonSchemas, renderSchema } from '../../src/contract/json-schemas.ts';
import { SAMPLES_DIR } from '../../src/paths.ts';
import { loadSamples } from '../../src/replay/samples.ts';

const samples = loadSamples([join(SAMPLES_DIR, 'events'), join(SAMPLES_DIR, 'cases'), join(SAMPLES_DIR, 'documents')], SAMPLES_DIR);

describe('samples', () => {
  it('has one sample per event type and the QA cases', () => {
    const types = new Set(samples.flatMap((s) => s.steps.map((st) => st.body?.eventType)).filter(Boolean));
    expect(types.size).toBe(9);
    const names = samples.map((s) => s.name);
    for (const c of ['duplicate-event-id', 'stale-snapshot', 'unmapped-entities', 'unknown-enum-value', 'malformed-body', 'bad-signature'])
      expect(names.some((n) => n.includes(c))).toBe(true);
  });

  it.each(samples.filter((s) => !s.document).map((s) => [s.name, s] as const))('%s: every body is a valid event', (_name, s) => {
    for (const step of s.steps) {
      if (step.rawBody !== undefined) {
        expect(() => JSON.parse(step.rawBody!)).toThrow();
        continue;
      }
      const r = webhookEventSchema.safeParse(step.body);
      expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
    }
  });

  it.each(samples.filter((s) => s.document).map((s) => [s.name, s] as const))('%s: a valid document request', (_name, s) => {
    const schema = s.document!.documentType === 'lab_report' ? labReportRequestSchema : prescriptionRequestSchema;
    expect(schema.safeParse(s.document!.request).success).toBe(true);
  });

  it('are the whole samples folder, as `replay samples` reads it: the FHIR data beside them (the master data) is none, unless named', () => {
    const whole = loadSamples([SAMPLES_DIR], SAMPLES_DIR).map((s) => s.name);
    expect(whole).toEqual(samples.map((s) => s.name).sort());
    expect(() => loadSamples([join(SAMPLES_DIR, 'emr-master-data.json')], SAMPLES_DIR)).toThrow('emr-master-data.json: not a sample');
  });

  it('schemas/ holds exactly what the zod schemas generate', () => {
    for (const [name, schema] of Object.entries(jsonSchemas())) {
      expect(readFileSync(join(SAMPLES_DIR, 'schemas', name), 'utf8'), `${name} is stale: run npm run schemas`).toBe(renderSchema(schema));
    }
  });
});
