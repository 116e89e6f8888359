// JSON Schemas of every event type and document request, generated from the zod schemas of this folder
// (never written by hand), for samples/schemas/ and for integrators who validate in other languages.
import { z } from 'zod';
import { labReportRequestSchema, prescriptionRequestSchema } from './documents.ts';
import { EVENT_TYPES, schemaForEventType } from './events.ts';

export function jsonSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    // Each file pins its own eventType, so a validator tells the nine types apart.
    const schema = schemaForEventType(type).extend({ eventType: z.literal(type) });
    out[`${type}.schema.json`] = { title: type, ...z.toJSONSchema(schema, { io: 'input' }) };
  }
  out['lab-report-request.schema.json'] = { title: 'POST /integration/v1/lab-reports', ...z.toJSONSchema(labReportRequestSchema, { io: 'input' }) };
  out['prescription-request.schema.json'] = { title: 'POST /integration/v1/prescriptions', ...z.toJSONSchema(prescriptionRequestSchema, { io: 'input' }) };
  return out;
}

export const renderSchema = (schema: unknown): string => `${JSON.stringify(schema, null, 2)}\n`;
