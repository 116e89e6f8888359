// `emr-bridge schemas [--out DIR] [--openapi-out DIR] [--check]`: writes the JSON Schemas generated from the
// zod schemas (samples/schemas by default) and the OpenAPI documents of the adapter's and the simulator's
// APIs (docs/openapi by default); --check only reports whether the files on disk are current.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemas, renderSchema } from '../contract/json-schemas.ts';
import { renderOpenApi } from '../openapi/build.ts';
import { OPENAPI_DIR, openApiDocuments } from '../api-docs/documents.ts';
import { SAMPLES_DIR } from '../paths.ts';
import { parse } from './args.ts';
import { SPECS } from './specs.ts';
import { print } from './output.ts';

export async function schemasCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS.schemas);
  const files: { dir: string; name: string; text: string }[] = [];
  const schemaDir = values.out ?? join(SAMPLES_DIR, 'schemas');
  for (const [name, schema] of Object.entries(jsonSchemas())) files.push({ dir: schemaDir, name, text: renderSchema(schema) });
  const openApiDir = values['openapi-out'] ?? OPENAPI_DIR;
  for (const [name, doc] of Object.entries(openApiDocuments())) files.push({ dir: openApiDir, name, text: renderOpenApi(doc) });

  let stale = 0;
  for (const { dir, name, text } of files) {
    const path = join(dir, name);
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
