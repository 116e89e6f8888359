// Owns the console's response headers: the CSP, framing, sniffing, referrer and caching headers on every
// console response (pages, errors, assets, redirects), and where the console is mounted (never on the
// public-only surface).
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/headers.ts';
import { consoleApp, signedIn } from './support/console-app.ts';

const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function expectHardened(res: request.Response) {
  expect(res.headers['content-security-policy']).toBe(EXPECTED_CSP);
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

describe('console headers', () => {
  it('the policy is exactly the one the issue asks for', () => {
    expect(CONSOLE_CSP).toBe(EXPECTED_CSP);
  });

  it('every page, redirect, error page and JSON answer carries the CSP and is never cached', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    for (const path of [
      '/console',
      '/console/events',
      '/console/events/evt_dead_1',
      '/console/dead-letters',
      '/console/documents',
      '/console/audit',
      '/console/nope',
      '/console/overview.json',
    ]) {
      const res = await agent.get(path);
      expectHardened(res);
      expect(res.headers['cache-control'], path).toBe('no-store');
    }
    const anonymous = await request(c.server).get('/console/events');
    expect(anonymous.status).toBe(303);
    expectHardened(anonymous);
    expectHardened(await request(c.server).get('/console/sign-in'));
  });

  it('assets carry the CSP too, with their content types, and may be cached briefly', async () => {
    const c = consoleApp();
    for (const [name, type] of [
      ['console.css', 'text/css'],
      ['widgets.css', 'text/css'],
      ['console.js', 'text/javascript'],
      ['overview.js', 'text/javascript'],
      ['uplot.iife.min.js', 'text/javascript'],
      ['uplot.min.css', 'text/css'],
    ]) {
      const res = await request(c.server).get(`/console/assets/${name}`).expect(200);
      expectHardened(res);
      expect(res.headers['content-type']).toContain(type);
      expect(res.headers['cache-control']).toBe('private, max-age=600');
    }
    expect((await request(c.server).get('/console/assets/..%2Fdata.ts')).status).toBe(404);
  });

  it('pages have no inline script or style for the CSP to block', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    for (const path of ['/console', '/console/events/evt_dead_1', '/console/dead-letters', '/console/sign-in']) {
      const text = (await agent.get(path)).text;
      expect(text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(text).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    }
  });

  it('is served where the admin API is, and never on the public-only surface', async () => {
    expect((await request(consoleApp({ surface: 'admin' }).server).get('/console/sign-in')).status).toBe(200);
    expect((await request(consoleApp({ surface: 'all' }).server).get('/console/sign-in')).status).toBe(200);
    const pub = consoleApp({ surface: 'public' });
    expect((await request(pub.server).get('/console/sign-in')).status).toBe(404);
    expect((await request(pub.server).get('/console/assets/console.css')).status).toBe(404);
  });
});
