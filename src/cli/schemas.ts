// `emr-bridge schemas [--out DIR] [--check]`: writes the JSON Schemas generated from the zod schemas
// (samples/schemas by default); --check only reports whether the files on disk are current.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemas, renderSchema } from '../contract/json-schemas.ts';
import { SAMPLES_DIR } from '../paths.ts';
import { parse } from './args.ts';
import { SPECS } from './specs.ts';
import { print } from './output.ts';

export async function schemasCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS.schemas);
  const dir = values.out ?? join(SAMPLES_DIR, 'schemas');
  let stale = 0;
  for (const [name, schema] of Object.entries(jsonSchemas())) {
    const path = join(dir, name);
    const text = renderSchema(schema);
    const current = existsSync(path) && readFileSync(path, 'utf8') === text;
    if (values.check) {
      if (!current) {
        stale++;
        print(`out of date: ${path}`);
      }
    } else if (!current) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path, text);
      print(`wrote ${path}`);
    }
  }
  return stale ? 1 : 0;
}
