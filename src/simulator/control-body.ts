// How the control API reads a body: strictly. A key it does not know, at any depth (a misspelt fault, a typo
// in a nested object), answers 400 invalid_request naming it as a dotted path, before anything changes.
import type { IncomingMessage } from 'node:http';
import { z, type ZodType } from 'zod';
import { ValidationError } from '../errors.ts';
import { readJson } from '../http/json-body.ts';

const MAX_BODY_BYTES = 1024 * 1024;

/** The body of an action that takes none: nothing, or {}. */
export const noFields = z.strictObject({});

export async function readControlBody<T>(req: IncomingMessage, schema: ZodType<T>): Promise<T> {
  const result = schema.safeParse(await readJson(req, MAX_BODY_BYTES));
  if (result.success) return result.data;
  // An unknown key goes first: a misspelling is usually also why a known field looks missing or wrong.
  const issues = result.error.issues;
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  const [path, message] = unknown ? [[...unknown.path, unknown.keys[0]!], 'unknown field'] : [issues[0]!.path, issues[0]!.message];
  const field = path.map(String).join('.');
  throw new ValidationError(`${field || 'body'}: ${message}`, field || undefined);
}
