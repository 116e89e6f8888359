// GET /.well-known/jwks.json: the adapter's public key, for EMRs that register a backend service by a JWKS URL.
import Router from '@koa/router';
import type { JWK } from 'jose';

export function createJwksRouter(publicJwk: JWK): Router {
  const router = new Router();
  const body = { keys: [publicJwk] };
  router.get('/.well-known/jwks.json', (ctx) => {
    ctx.set('cache-control', 'public, max-age=300');
    ctx.body = body;
  });
  return router;
}
