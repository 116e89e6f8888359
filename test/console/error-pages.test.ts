// Owns the console's error pages: not found, no session, no rights (in ./actions.test.ts), the adapter
// starting or stopping (503 with Retry-After), and a failure inside a page (500, no detail shown), each a
// page in the console's shell with a way on.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import { consoleApp, signedIn } from './support/console-app.ts';

describe('console error pages', () => {
  it('an unknown console path and an unknown event are 404 pages with a way back', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const page = await agent.get('/console/no-such-page').expect(404).expect('content-type', /html/);
    expect(page.text).toContain('<h1>Not found</h1>');
    expect(page.text).toContain('Back to the overview');
    expect((await agent.get('/console/events/evt_nope').expect(404)).text).toContain('no such event');
    expect((await agent.get('/console/documents/doc_nope').expect(404)).text).toContain('no such document');
  });

  it('without a session, a page goes to sign-in (with the way back); the console root too', async () => {
    const c = consoleApp();
    expect((await request(c.server).get('/console').expect(303)).headers.location).toBe('/console/sign-in');
    expect((await request(c.server).get('/console/').expect(303)).headers.location).toBe('/console/sign-in');
    expect((await request(c.server).get('/console/audit?actor=a').expect(303)).headers.location).toBe('/console/sign-in?next=%2Fconsole%2Faudit%3Factor%3Da');
  });

  it('while the adapter starts or stops every page answers a 503 page (assets still load)', async () => {
    let available = true;
    const c = consoleApp({ available: () => available });
    const agent = await signedIn(c);
    available = false;
    const page = await agent.get('/console').expect(503);
    expect(page.headers['retry-after']).toBe('30');
    expect(page.text).toContain('The adapter is not available');
    await request(c.server).get('/console/sign-in').expect(503);
    await request(c.server).get('/console/assets/console.css').expect(200);
  });

  it('a failure inside a page is a 500 page that shows nothing of the error', async () => {
    const c = consoleApp();
    c.data.overview = async () => {
      throw new Error('SQLITE_CORRUPT at /data/secret-path.db');
    };
    const agent = await signedIn(c);
    const page = await agent.get('/console').expect(500);
    expect(page.text).toContain('Something went wrong');
    expect(page.text).not.toContain('secret-path');
  });

  it('a search the data port cannot read is a 400 page naming what was wrong', async () => {
    const c = consoleApp();
    c.data.events = async () => {
      throw new ValidationError('after: not a position this list gave out', 'after');
    };
    const agent = await signedIn(c);
    const page = await agent.get('/console/events?after=zzz').expect(400);
    expect(page.text).toContain('after: not a position this list gave out');
  });
});
