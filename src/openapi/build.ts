// buildOpenApi: an OpenAPI 3.1 document from an API description (./describe.ts). components.schemas come
// from the routes' own zod schemas through z.toJSONSchema (JSON Schema 2020-12, the dialect of OpenAPI 3.1):
// request bodies and parameters as their input (defaults make a field optional), answers as their output.
// Nothing here is written by hand but the description's words, so the document follows the code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PACKAGE_ROOT } from '../paths.ts';
import type { ApiDescription, JsonSchema, Named, ParameterDescription, ResponseDescription, RouteDescription } from './describe.ts';

/** `{"error": {"code", "message", "field"?}}`: every error answer of the adapter and the simulator (src/http/error-middleware.ts). */
export const errorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.string().describe('A stable code: invalid_request, unauthorized, not_found, …'),
    message: z.string().describe('What went wrong, for a person.'),
    field: z.string().optional().describe('The request field at fault, as a dotted path.'),
  }),
});

const ERROR = 'Error';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const isZod = (s: unknown): s is z.ZodType => typeof s === 'object' && s !== null && '_zod' in s;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown> };
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** A schema as JSON Schema 2020-12 without the keys that only make sense at a document's root. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as JsonSchema;
  return rest;
}

/** Whether a parameter's zod schema takes `undefined` (an optional parameter). */
const optional = (schema: z.ZodType) => schema.safeParse(undefined).success;

type Io = 'input' | 'output';
/** Registers a named schema for components.schemas on one side (request or answer); returns its $ref. */
type Use = (n: Named, io: Io) => { $ref: string };

export function buildOpenApi(api: ApiDescription, version = packageVersion()): OpenApiDocument {
  const registry = createSchemaRegistry();
  registry.use({ name: ERROR, schema: errorBodySchema }, 'output');
  const paths = pathsOf(api, registry.use);
  return {
    openapi: '3.1.0',
    info: { title: api.title, version, description: api.description },
    tags: api.tags,
    paths,
    components: {
      schemas: registry.schemas(),
      securitySchemes: api.bearer ? { [api.bearer.name]: { type: 'http', scheme: 'bearer', description: api.bearer.description } } : {},
    },
  };
}

function createSchemaRegistry(): { use: Use; schemas(): Record<string, JsonSchema> } {
  // Request schemas and answer schemas are generated apart (input and output differ on defaults and
  // transforms); a name belongs to one schema on one side.
  const registries = { input: z.registry<{ id: string }>(), output: z.registry<{ id: string }>() };
  const owners = new Map<string, { schema: z.ZodType; io: Io }>();
  const use: Use = (n, io) => {
    const owner = owners.get(n.name);
    if (owner && (owner.schema !== n.schema || owner.io !== io))
      throw new Error(`openapi: the name ${n.name} is given to two schemas (or to a request and an answer)`);
    const known = registries[io].get(n.schema);
    if (known && known.id !== n.name) throw new Error(`openapi: one schema named both ${known.id} and ${n.name}`);
    if (!owner) {
      owners.set(n.name, { schema: n.schema, io });
      registries[io].add(n.schema, { id: n.name });
    }
    return ref(n.name);
  };
  const schemas = () => {
    const all: Record<string, JsonSchema> = {};
    for (const io of ['input', 'output'] as const) {
      const generated = z.toJSONSchema(registries[io], { target: 'draft-2020-12', io, uri: (id) => `#/components/schemas/${id}` }).schemas;
      for (const [name, schema] of Object.entries(generated)) {
        // __shared would hold schemas that carry a global .meta({id}); none here does, and a document must not guess.
        if (name === '__shared') throw new Error('openapi: a schema carries a global id; name it in the description instead');
        const { $schema: _s, $id: _i, ...rest } = schema as JsonSchema;
        all[name] = rest;
      }
    }
    return Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
  };
  return { use, schemas };
}

function pathsOf(api: ApiDescription, use: Use): OpenApiDocument['paths'] {
  const paths: OpenApiDocument['paths'] = {};
  const ids = new Set<string>();
  for (const route of api.routes) {
    if (ids.has(route.operationId)) throw new Error(`openapi: operationId ${route.operationId} is used twice`);
    ids.add(route.operationId);
    paths[route.path] ??= {};
    const item = paths[route.path]!;
    if (item[route.method]) throw new Error(`openapi: ${route.method} ${route.path} is described twice`);
    item[route.method] = operation(api, route, use);
  }
  return paths;
}

function operation(api: ApiDescription, route: RouteDescription, use: Use) {
  const parameters = parametersOf(route);
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(route.responses)) responses[status] = answer(r, use);
  for (const [status, description] of Object.entries(route.errors ?? {}))
    responses[status] = { description, content: { 'application/json': { schema: ref(ERROR) } } };
  if (route.auth && !api.bearer) throw new Error(`openapi: ${route.operationId} needs auth, but the API has no bearer scheme`);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.auth ? { security: [{ [api.bearer!.name]: [] }] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: route.body.required ?? true,
            ...(route.body.description ? { description: route.body.description } : {}),
            content: { [route.body.contentType ?? 'application/json']: { schema: use(route.body.schema, 'input') } },
          },
        }
      : {}),
    responses,
  };
}

function parametersOf(route: RouteDescription) {
  const inPath = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const described = Object.keys(route.params ?? {}).filter((p) => !inPath.includes(p));
  if (described.length) throw new Error(`openapi: ${route.method} ${route.path} describes ${described.join(', ')}, not in its path`);
  return [
    ...inPath.map((name) => parameter(name, 'path', route.params?.[name] ?? { schema: { type: 'string' } })),
    ...Object.entries(route.query ?? {}).map(([name, d]) => parameter(name, 'query', d)),
    ...Object.entries(route.headers ?? {}).map(([name, d]) => parameter(name, 'header', d)),
  ];
}

function parameter(name: string, where: 'path' | 'query' | 'header', d: z.ZodType | ParameterDescription) {
  const p = isZod(d) ? { schema: d } : d;
  const schema = isZod(p.schema) ? jsonSchema(p.schema, 'input') : p.schema;
  const { description: inner, ...rest } = schema;
  const description = p.description ?? (typeof inner === 'string' ? inner : undefined);
  const required = where === 'path' || (p.required ?? (isZod(p.schema) ? !optional(p.schema) : false));
  return { name, in: where, required, ...(description ? { description } : {}), schema: rest };
}

function answer(r: ResponseDescription, use: Use) {
  return {
    description: r.description,
    ...(r.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(r.headers).map(([name, h]) => {
              const { name: _n, in: _in, ...header } = parameter(name, 'header', h);
              return [name, header];
            }),
          ),
        }
      : {}),
    ...(r.body
      ? { content: { [r.contentType ?? 'application/json']: { schema: 'schema' in r.body && isZod(r.body.schema) ? use(r.body as Named, 'output') : r.body } } }
      : {}),
  };
}

/** The document as written to docs/openapi/ (and compared by `schemas --check`). */
export const renderOpenApi = (doc: OpenApiDocument): string => `${JSON.stringify(doc, null, 2)}\n`;
