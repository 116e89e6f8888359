// Reading a console form (application/x-www-form-urlencoded) once, with a small size limit: the console's
// forms carry ids, a filter and the CSRF token, never a document. Anything else reads as an empty form.
import type { Context } from 'koa';
import getRawBody from 'raw-body';

const FORM_LIMIT_BYTES = 64 * 1024;

export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
  return new URLSearchParams(await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: 'utf8' }));
}

/** A query parameter as one trimmed string (the first when repeated); undefined when absent or empty. */
export function param(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s : undefined;
}

/** Every value of a repeated query parameter (checkboxes), trimmed, empty ones dropped. */
export function params(ctx: Context, name: string): string[] {
  const v = ctx.query[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((s) => s.trim()).filter(Boolean);
}
