// GET /openapi.json: the OpenAPI 3.1 document of what this app serves. It holds no secret and no data (the
// same text is in docs/openapi/), so it is served without a token, as /metrics is; the adapter serves it
// where its admin API is (src/app/app.ts: never on the public listener when ADMIN_PORT is set).
import Router from '@koa/router';
import type { OpenApiDocument } from './build.ts';

export const OPENAPI_PATH = '/openapi.json';

export function createOpenApiRouter(document: () => OpenApiDocument): Router {
  const router = new Router();
  let body: string | undefined;
  router.get(OPENAPI_PATH, (ctx) => {
    // Built on the first request, not at start-up: most runs never ask for it.
    body ??= JSON.stringify(document());
    ctx.set('cache-control', 'no-cache');
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return router;
}
