// The headers every console response carries: a Content-Security-Policy that allows no inline script or
// style and no other origin and refuses framing, no MIME sniffing, no referrer, and no caching of pages
// (assets, which hold no data, may be cached by the browser for a short while).
import type { Middleware } from 'koa';

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const securityHeaders: Middleware = async (ctx, next) => {
  ctx.set('Content-Security-Policy', CONSOLE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  await next();
};

/** Static files: the same policy, cacheable for ten minutes (they change only with a new version). */
export const ASSET_CACHE_CONTROL = 'private, max-age=600';
