// The console's static files, read once when the router is built: its stylesheet and scripts (next to this
// file, in assets/) and uPlot's (from the npm package). Only these names are served; no directory is.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import { ASSET_CACHE_CONTROL } from './headers.ts';

interface Asset {
  type: string;
  body: Buffer;
}

const require = createRequire(import.meta.url);
const own = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

const SOURCES: Record<string, { path: () => string; type: string }> = {
  'console.css': { path: () => own('console.css'), type: 'text/css; charset=utf-8' },
  'widgets.css': { path: () => own('widgets.css'), type: 'text/css; charset=utf-8' },
  'console.js': { path: () => own('console.js'), type: 'text/javascript; charset=utf-8' },
  'overview.js': { path: () => own('overview.js'), type: 'text/javascript; charset=utf-8' },
  'uplot.min.css': { path: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
  'uplot.iife.min.js': { path: () => require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
};

export const ASSET_NAMES = Object.keys(SOURCES);

export function loadAssets(): Map<string, Asset> {
  return new Map(Object.entries(SOURCES).map(([name, s]) => [name, { type: s.type, body: readFileSync(s.path()) }]));
}

export function registerAssets(router: Router): void {
  const assets = loadAssets();
  router.get('/assets/:name', (ctx, next) => {
    const asset = assets.get(ctx.params.name!);
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', ASSET_CACHE_CONTROL);
    ctx.body = asset.body;
  });
}
