// Reading a JSON request body once, for every route that takes one: a size limit, an empty body as {},
// and one clear 400 `invalid_request` (naming the field, for schema failures) for anything else. What was read
// stays with the request (parsedBodyOf) for the admin audit trail.
import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import type { ZodType } from 'zod';
import { ValidationError } from '../errors.ts';

/** The bodies routes have read, by request: the audit trail picks the ids it records from them. */
const parsedBodies = new WeakMap<IncomingMessage, unknown>();

/** The JSON body a route read from `req` with readJson; undefined when it read none. */
export const parsedBodyOf = (req: IncomingMessage): unknown => parsedBodies.get(req);

export async function readJson(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const text = (await getRawBody(req, { limit: limitBytes, encoding: 'utf8' })).trim();
  let body: unknown = {};
  if (text) {
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      throw new ValidationError('the body is not valid JSON');
    }
  }
  parsedBodies.set(req, body);
  return body;
}

/** Parses with a zod schema; the first issue becomes the error, its path the `field`. */
export function validate<T>(schema: ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  throw new ValidationError(`${field || 'body'}: ${issue.message}`, field || undefined);
}

export async function readValidated<T>(req: IncomingMessage, schema: ZodType<T>, limitBytes: number): Promise<T> {
  return validate(schema, await readJson(req, limitBytes));
}
