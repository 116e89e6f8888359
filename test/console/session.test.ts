// Owns console sessions and sign-in: the cookie's flags, idle and absolute expiry on the injected clock,
// sign-out, a new session id at each sign-in, the way back to the page asked for, failed sign-ins (audited
// `refused`, slowed by the throttle) and that a token is never recorded.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createSessionStore, SESSION_LIFETIME_MS, setSessionCookie } from '../../src/console/session.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createSqliteConsoleSessionStore } from '../../src/storage/sqlite/console-sessions.ts';
import { consoleApp, csrfOf, OPERATOR_TOKEN, signedIn, signInThroughForm } from './support/console-app.ts';

const cookieOf = (res: request.Response, name: string) => ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`${name}=`));

describe('console sessions', () => {
  it('signing in sets an HttpOnly, SameSite=Strict cookie scoped to /console that expires with the idle timeout', async () => {
    const c = consoleApp({ sessionMinutes: 30 });
    const { res } = await signInThroughForm(c);
    expect(res.headers.location).toBe('/console');
    const cookie = cookieOf(res, 'emr_bridge_session')!;
    expect(cookie).toMatch(/^emr_bridge_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/; path=\/console/i);
    expect(cookie).toMatch(/; httponly/i);
    expect(cookie).toMatch(/; samesite=strict/i);
    // Expires with the idle timeout (from the browser's clock, which is the wall clock).
    const expires = Date.parse(/; expires=([^;]+)/i.exec(cookie)![1]!) - Date.now();
    expect(expires).toBeGreaterThan(29 * 60_000);
    expect(expires).toBeLessThanOrEqual(30 * 60_000);
    expect(cookie).not.toMatch(/; secure/i); // plain http here
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', door: 'console', action: 'sign_in', outcome: 'ok' });
  });

  it('CONSOLE_SESSION_MINUTES sets the idle timeout: 30 by default, 1 to 720', () => {
    expect(parseConfig({}).console.sessionMinutes).toBe(30);
    expect(parseConfig({ CONSOLE_SESSION_MINUTES: '45' }).console.sessionMinutes).toBe(45);
    expect(() => parseConfig({ CONSOLE_SESSION_MINUTES: '0' })).toThrow(/CONSOLE_SESSION_MINUTES/);
  });

  it('the cookie is Secure when the request came over https', async () => {
    const set: unknown[][] = [];
    const ctx = { secure: true, cookies: { set: (...a: unknown[]) => set.push(a) } };
    const store = createSqliteConsoleSessionStore(openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS }));
    const session = await createSessionStore({ store, clock: createManualClock(), idleMinutes: 30 }).create({ name: 'admin', role: 'operator' });
    setSessionCookie(ctx as never, session, 30);
    expect(set[0]![2]).toMatchObject({ secure: true, httpOnly: true, sameSite: 'strict', path: '/console' });
  });

  it('a session idle longer than CONSOLE_SESSION_MINUTES ends: the next page goes to sign-in saying so', async () => {
    const c = consoleApp({ sessionMinutes: 30 });
    const agent = await signedIn(c);
    c.clock.advance(29 * 60_000);
    await agent.get('/console').expect(200);
    c.clock.advance(29 * 60_000); // in use: the idle time restarted
    await agent.get('/console').expect(200);
    c.clock.advance(30 * 60_000 + 1);
    const res = await agent.get('/console/events').expect(303);
    expect(res.headers.location).toBe('/console/sign-in?m=expired&next=%2Fconsole%2Fevents');
    const page = await agent.get(res.headers.location!).expect(200);
    expect(page.text).toContain('Your session has ended');
  });

  it('a session in constant use still ends at its absolute lifetime', async () => {
    const c = consoleApp({ sessionMinutes: 30 });
    const agent = await signedIn(c);
    for (let t = 0; t + 20 * 60_000 < SESSION_LIFETIME_MS; t += 20 * 60_000) {
      c.clock.advance(20 * 60_000);
      await agent.get('/console').expect(200);
    }
    c.clock.advance(20 * 60_000);
    expect((await agent.get('/console')).headers.location).toMatch(/^\/console\/sign-in\?m=expired/);
  });

  it("the page's script is told with a 401, not a redirect, when its session ended", async () => {
    const c = consoleApp();
    const res = await request(c.server).get('/console/overview.json').set('Cookie', 'emr_bridge_session=gone').expect(401);
    expect(res.body.error.code).toBe('session_ended');
  });

  it('signing out ends the session at once and is audited', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const page = await agent.get('/console').expect(200);
    const res = await agent
      .post('/console/sign-out')
      .type('form')
      .send({ csrf: csrfOf(page.text) })
      .expect(303);
    expect(res.headers.location).toBe('/console/sign-in?m=signed-out');
    expect((await agent.get('/console')).status).toBe(303);
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', action: 'sign_out', outcome: 'ok' });
  });

  it('each sign-in gets a new session id, and goes back to the page first asked for (never off the console)', async () => {
    const c = consoleApp();
    const agent = request.agent(c.server);
    const first = await agent.get('/console/documents?status=FAILED').expect(303);
    const form = await agent.get(first.headers.location!).expect(200);
    expect(form.text).toContain('name="next" value="/console/documents?status=FAILED"');
    const a = await agent
      .post('/console/sign-in')
      .type('form')
      .send({ token: OPERATOR_TOKEN, csrf: csrfOf(form.text), next: '/console/documents?status=FAILED' });
    expect(a.headers.location).toBe('/console/documents?status=FAILED');
    const form2 = await request(c.server).get('/console/sign-in');
    const csrf2 = csrfOf(form2.text);
    const b = await request(c.server)
      .post('/console/sign-in')
      .set('Cookie', [`emr_bridge_sign_in=${csrf2}`, `emr_bridge_session=${cookieOf(a, 'emr_bridge_session')!.split(/[=;]/)[1]}`])
      .type('form')
      .send({ token: OPERATOR_TOKEN, csrf: csrf2, next: '//evil.example/console' });
    expect(b.headers.location).toBe('/console');
    expect(cookieOf(b, 'emr_bridge_session')).not.toBe(cookieOf(a, 'emr_bridge_session'));
    // The session that was replaced is over.
    expect((await agent.get('/console')).status).toBe(303);
  });
});

describe('console sessions across replicas', () => {
  /** Signs in on `c` and gives the session cookie, to present to any replica. */
  async function sessionCookieFrom(c: ReturnType<typeof consoleApp>): Promise<string> {
    const { res } = await signInThroughForm(c);
    return cookieOf(res, 'emr_bridge_session')!.split(';')[0]!;
  }

  it('a session begun on one replica is known to another, and a one-time message set on one is shown once by the other', async () => {
    const a = consoleApp();
    const b = consoleApp({ sessionStore: a.sessionStore, clock: a.clock });
    const cookie = await sessionCookieFrom(a);
    await request(b.server).get('/console').set('Cookie', cookie).expect(200);
    const confirm = await request(a.server).get('/console/dead-letters/confirm?eventId=evt_dead_1').set('Cookie', cookie).expect(200);
    const res = await request(a.server)
      .post('/console/dead-letters/replay')
      .set('Cookie', cookie)
      .type('form')
      .send({ eventId: 'evt_dead_1', csrf: csrfOf(confirm.text) })
      .expect(303);
    expect((await request(b.server).get(res.headers.location!).set('Cookie', cookie).expect(200)).text).toContain('Replayed 1 of 1.');
    expect((await request(a.server).get(res.headers.location!).set('Cookie', cookie).expect(200)).text).not.toContain('Replayed 1 of 1.');
    // Signed out on b: over on a too.
    const page = await request(b.server).get('/console').set('Cookie', cookie).expect(200);
    await request(b.server)
      .post('/console/sign-out')
      .set('Cookie', cookie)
      .type('form')
      .send({ csrf: csrfOf(page.text) })
      .expect(303);
    expect((await request(a.server).get('/console').set('Cookie', cookie)).status).toBe(303);
  });

  it('a restart signs nobody out: the adapter started again on the same store knows the session', async () => {
    const before = consoleApp();
    const cookie = await sessionCookieFrom(before);
    const after = consoleApp({ sessionStore: before.sessionStore, clock: before.clock });
    await request(after.server).get('/console').set('Cookie', cookie).expect(200);
  });

  it('the database holds a hash of the session token, never the token', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const c = consoleApp({ sessionStore: createSqliteConsoleSessionStore(db) });
    const token = (await sessionCookieFrom(c)).split('=')[1]!;
    const hashes = db.prepare('SELECT token_hash FROM console_sessions').pluck().all() as string[];
    expect(hashes).toHaveLength(1);
    expect(hashes[0]).not.toBe(token);
    expect(JSON.stringify(db.prepare('SELECT * FROM console_sessions').all())).not.toContain(token);
  });
});

describe('console sign-in', () => {
  it('a wrong token answers the form again with 401, audited `sign_in` `refused` by `-`, and the token is recorded nowhere', async () => {
    const c = consoleApp();
    const agent = request.agent(c.server);
    const form = await agent.get('/console/sign-in');
    const res = await agent
      .post('/console/sign-in')
      .type('form')
      .send({ token: 'guess-0000000000000000', csrf: csrfOf(form.text) })
      .expect(401);
    expect(res.text).toContain('That credential was not accepted.');
    expect(res.text).not.toContain('guess-0000000000000000');
    expect(c.auditor.entries).toEqual([expect.objectContaining({ actor: '-', door: 'console', action: 'sign_in', targets: [], outcome: 'refused' })]);
    expect(JSON.stringify(c.auditor.entries)).not.toContain('guess');
  });

  it('a sign-in form posted without its own token is refused (403) and audited', async () => {
    const c = consoleApp();
    const res = await request(c.server).post('/console/sign-in').type('form').send({ token: OPERATOR_TOKEN }).expect(403);
    expect(res.text).toContain('Form refused');
    expect(res.headers['set-cookie'] ?? []).not.toEqual(expect.arrayContaining([expect.stringMatching(/^emr_bridge_session=[^;]/)]));
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: '-', action: 'sign_in', outcome: 'refused' });
  });

  it('repeated failures are slowed: after five, the address waits (429, Retry-After) even with the right token', async () => {
    const c = consoleApp();
    const agent = request.agent(c.server);
    const csrf = csrfOf((await agent.get('/console/sign-in')).text);
    for (let i = 0; i < 6; i++)
      await agent
        .post('/console/sign-in')
        .type('form')
        .send({ token: `wrong-${i}`, csrf })
        .expect(401);
    const slowed = await agent.post('/console/sign-in').type('form').send({ token: OPERATOR_TOKEN, csrf }).expect(429);
    expect(slowed.headers['retry-after']).toBe('1');
    expect(slowed.text).toContain('Too many failed sign-ins');
    expect(c.auditor.entries.filter((e) => e.action === 'sign_in' && e.outcome === 'refused')).toHaveLength(7);
    c.clock.advance(1_000);
    await agent.post('/console/sign-in').type('form').send({ token: OPERATOR_TOKEN, csrf }).expect(303);
  });

  it('a signed-in visitor to the sign-in page goes to the overview', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    expect((await agent.get('/console/sign-in').expect(303)).headers.location).toBe('/console');
  });
});
