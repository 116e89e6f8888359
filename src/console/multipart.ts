// Reading the console's one file form (multipart/form-data: the crosswalk import's CSV beside the CSRF token)
// once, up to a size limit; each part's value as UTF-8 text, a file's too. Only what a browser sends for a form
// of text fields and files; anything else reads as an empty form (and so fails the CSRF check).
import type { Context } from 'koa';
import getRawBody from 'raw-body';

export async function readMultipartForm(ctx: Context, limitBytes: number): Promise<URLSearchParams> {
  const boundary = ctx.is('multipart/form-data') ? boundaryOf(ctx.get('content-type')) : undefined;
  if (!boundary) return new URLSearchParams();
  return partsOf(await getRawBody(ctx.req, { limit: limitBytes }), boundary);
}

/** The boundary a Content-Type names (RFC 2046: at most 70 characters, perhaps quoted). */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/** The named parts of a multipart body, in order; a part without a name, or cut short, is left out. */
export function partsOf(body: Buffer, boundary: string): URLSearchParams {
  const form = new URLSearchParams();
  const first = Buffer.from(`--${boundary}`);
  const between = Buffer.from(`\r\n--${boundary}`);
  let at = body.indexOf(first);
  if (at < 0) return form;
  at += first.length;
  // Each part follows its delimiter's line break and ends where the next delimiter's line break begins.
  while (body.subarray(at, at + 2).toString('latin1') === '\r\n') {
    const end = body.indexOf(between, at);
    if (end < 0) break;
    const part = body.subarray(at + 2, end);
    const headEnd = part.indexOf('\r\n\r\n');
    const name = headEnd < 0 ? undefined : /^content-disposition:[^\r\n]*;\s*name="([^"]*)"/im.exec(part.subarray(0, headEnd).toString('utf8'))?.[1];
    if (name !== undefined) form.append(name, part.subarray(headEnd + 4).toString('utf8'));
    at = end + between.length;
  }
  return form;
}
