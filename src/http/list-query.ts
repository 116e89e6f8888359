// The query parameters every admin list takes: `limit` (1..500, default 100), `cursor` (opaque, the previous
// page's nextCursor), `type`, and `since`/`until` (ISO 8601 with a zone; since inclusive, until exclusive).
// A bad value or an unknown parameter is a 400 `invalid_request` naming it.
import { z } from 'zod';
import { ValidationError } from '../errors.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

const instant = z
  .string()
  .refine((s) => ISO_8601.test(s) && Number.isFinite(Date.parse(s)), 'must be an ISO 8601 date, or date-time with a zone (2026-01-15T10:00:00Z)')
  .transform((s) => Date.parse(s));

/** The parameters shared by every list; each list adds its own (documents' status). */
export const listParams = {
  limit: z
    .string()
    .regex(/^\d+$/, `must be a whole number from 1 to ${MAX_LIMIT}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_LIMIT, `must be a whole number from 1 to ${MAX_LIMIT}`)
    .optional(),
  cursor: z.string().min(1).max(1000).optional(),
  type: z.string().min(1).max(200).optional(),
  since: instant.optional(),
  until: instant.optional(),
};

export interface ListQuery {
  limit: number;
  cursor?: string;
  type?: string;
  since?: number;
  until?: number;
}

/** Parses a list's query string with the shared parameters plus `extra`; only the named keys are allowed. */
export function parseListQuery<E extends z.ZodRawShape>(query: unknown, extra: E): ListQuery & z.output<z.ZodObject<E>> {
  const r = z.strictObject({ ...listParams, ...extra }).safeParse(query);
  if (!r.success) throw toValidationError(r.error.issues[0]!);
  const parsed = r.data as Record<string, unknown> & Omit<ListQuery, 'limit'> & { limit?: number };
  if (parsed.since !== undefined && parsed.until !== undefined && parsed.until <= parsed.since)
    throw new ValidationError('until: must be later than since', 'until');
  return { ...parsed, limit: parsed.limit ?? DEFAULT_LIMIT } as ListQuery & z.output<z.ZodObject<E>>;
}

/** A query parameter's problem as a 400 naming it (an unknown one, one given twice, a bad value). */
export function toValidationError(issue: z.core.$ZodIssue): ValidationError {
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    return new ValidationError(`${key}: unknown parameter`, key);
  }
  const field = String(issue.path[0] ?? 'query');
  const message = issue.code === 'invalid_type' ? 'must be given once' : issue.message;
  return new ValidationError(`${field}: ${message}`, field);
}

/** An opaque cursor: a position in a list, in base64url JSON. Clients pass it back unchanged. */
export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** Reads a cursor this API gave out; anything else is a 400 naming `cursor`. */
export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new ValidationError('cursor: not a cursor this list gave out', 'cursor');
  return r.data;
}
