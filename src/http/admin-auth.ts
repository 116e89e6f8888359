// Bearer ADMIN_TOKEN for everything under /admin/, compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { UnauthorizedError } from '../errors.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function adminAuth(token: string | undefined): Middleware {
  const expected = token ? digest(token) : undefined;
  return async (ctx, next) => {
    const m = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'));
    // Hashing both sides gives equal lengths, so the comparison itself leaks nothing.
    if (!expected || !m || !timingSafeEqual(digest(m[1]!.trim()), expected)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="emr-bridge admin"');
      throw new UnauthorizedError('admin token required');
    }
    await next();
  };
}
