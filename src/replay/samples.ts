// The sample file format (samples/README.md): one delivery with its expected outcome, or a sequence of
// them in `steps` (replayed in order), or a document request for the admin API. Loaded and checked here,
// so a broken sample fails with its file name rather than as a strange outcome.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { z } from 'zod';

const expectSchema = z.object({
  http: z.number().int(),
  duplicate: z.boolean().optional(),
  /** The processing state the admin API reports once final. */
  state: z.enum(['applied', 'discarded_stale', 'dead']).optional(),
  /** For documents: the outbox status once it left 'queued' (one of several when time of day decides). */
  status: z.union([z.string(), z.array(z.string())]).optional(),
});

const deliverySchema = z
  .object({
    description: z.string(),
    expect: expectSchema,
    signature: z.enum(['valid', 'invalid']).default('valid'),
    body: z.record(z.string(), z.unknown()).optional(),
    /** A body sent byte for byte (malformed cases); eventId and eventType then go in the headers. */
    rawBody: z.string().optional(),
    eventId: z.string().optional(),
    eventType: z.string().optional(),
  })
  .refine((s) => (s.body === undefined) !== (s.rawBody === undefined), 'exactly one of body or rawBody');

const documentSchema = z.object({
  description: z.string(),
  kind: z.literal('document'),
  documentType: z.enum(['lab_report', 'prescription']),
  expect: expectSchema,
  request: z.record(z.string(), z.unknown()),
});

const fileSchema = z.union([documentSchema, z.object({ description: z.string(), steps: z.array(deliverySchema).min(1) }), deliverySchema]);

export type Delivery = z.infer<typeof deliverySchema>;
export type DocumentSample = z.infer<typeof documentSchema>;
export type Expectation = z.infer<typeof expectSchema>;
export interface Sample {
  name: string;
  description: string;
  steps: Delivery[];
  document?: DocumentSample;
}

/** The files a path names: itself, or the JSON files found in the folder (`found`). */
function files(path: string): { file: string; found: boolean }[] {
  if (!statSync(path).isDirectory()) return [{ file: path, found: false }];
  return readdirSync(path)
    .sort()
    .flatMap((f) => files(join(path, f)))
    .filter(({ file }) => file.endsWith('.json') && !file.endsWith('.schema.json'))
    .map(({ file }) => ({ file, found: true }));
}

/** FHIR data kept beside the samples (samples/emr-master-data.json, the vendor profile's master data): no sample. */
const isFhirResource = (json: unknown): boolean => typeof (json as { resourceType?: unknown } | null)?.resourceType === 'string';

export function loadSamples(paths: string[], root = process.cwd()): Sample[] {
  return paths.flatMap(files).flatMap(({ file, found }) => {
    const name = relative(root, file);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      throw new Error(`${name}: not valid JSON`);
    }
    if (found && isFhirResource(json)) return [];
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) throw new Error(`${name}: not a sample (${parsed.error.issues[0]?.message ?? 'unknown shape'})`);
    const s = parsed.data;
    if ('kind' in s) return [{ name, description: s.description, steps: [], document: s }];
    if ('steps' in s) return [{ name, description: s.description, steps: s.steps }];
    return [{ name, description: s.description, steps: [s] }];
  });
}
