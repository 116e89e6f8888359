// GET /admin/audit and what feeds it: the entries newest first, filtered and paged with `before`; failed
// sign-ins recorded (actor `-`, sign_in, refused) and slowed per address (429 with Retry-After, the right
// token too, until the wait is over); the CLI's calls recorded with the door `cli`, and `emr-bridge audit`.
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { adminClientFrom } from '../../src/cli/admin-client.ts';
import { main } from '../../src/cli/main.ts';
import { parseConfig } from '../../src/config.ts';
import { auditedAdmin, deadLetter, TOKENS } from '../support/audited-admin.ts';
import { captureOutput } from '../support/captured-output.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function listen(a: ReturnType<typeof auditedAdmin>): Promise<string> {
  const server = createServer(a.app.callback());
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('GET /admin/audit', () => {
  it('lists entries newest first, filtered by actor, action and target, a page at a time', async () => {
    const a = auditedAdmin();
    for (const id of ['ev-1', 'ev-2', 'ev-3']) await deadLetter(a.f, id);
    await a.as('operator').post('/dead-letters/ev-1/replay');
    a.f.clock.advance(60_000);
    await a.as('viewer').post('/dead-letters/ev-2/replay');
    a.f.clock.advance(60_000);
    await a.as('admin').post('/dead-letters/ev-3/dismiss', { reason: 'test data' });
    await a.as('operator').post('/dead-letters/ev-2/replay');

    const all = (await a.as('viewer').get('/audit')).body;
    expect(all.entries.map((e: { action: string; targets: string[] }) => `${e.action} ${e.targets}`)).toEqual([
      'dead_letter.replay ev-2',
      'dead_letter.dismiss ev-3',
      'dead_letter.replay ev-2',
      'dead_letter.replay ev-1',
    ]);
    expect(all.entries[3]).toEqual({
      id: expect.any(Number),
      at: '2026-01-15T10:00:00.000Z',
      actor: 'integration',
      door: 'api',
      action: 'dead_letter.replay',
      targets: ['ev-1'],
      from: '127.0.0.1',
      outcome: 'ok',
    });
    expect(all.nextBefore).toBeNull();

    const pick = async (query: string) => (await a.as('viewer').get(`/audit?${query}`)).body;
    expect((await pick('actor=integration')).entries.map((e: { targets: string[] }) => e.targets[0])).toEqual(['ev-2', 'ev-1']);
    expect((await pick('action=dead_letter.dismiss')).entries.map((e: { actor: string }) => e.actor)).toEqual(['admin']);
    expect((await pick('target=ev-2')).entries.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'denied']);
    expect((await pick('since=2026-01-15T10:01:00Z&until=2026-01-15T10:02:00Z')).entries.map((e: { actor: string }) => e.actor)).toEqual(['night-desk']);

    const first = await pick('limit=3');
    expect(first.entries).toHaveLength(3);
    const second = await pick(`limit=3&before=${first.nextBefore}`);
    expect(second.entries.map((e: { targets: string[] }) => e.targets[0])).toEqual(['ev-1']);
    expect(second.nextBefore).toBeNull();
  });

  it('refuses a bad or unknown parameter by name', async () => {
    const a = auditedAdmin();
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['before=abc', 'before'],
      ['since=yesterday', 'since'],
      ['since=2026-01-02&until=2026-01-01', 'until'],
      ['cursor=x', 'cursor'],
    ]) {
      const res = await a.as('viewer').get(`/audit?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
    }
  });
});

describe('failed sign-ins', () => {
  it('are recorded as refused sign_in by `-`, and never what was presented', async () => {
    const a = auditedAdmin();
    await a.as(undefined).get('/dead-letters');
    await a.as(undefined).post('/dead-letters/ev-1/replay').set('authorization', 'Bearer +15550001111');
    const entries = await a.entries();
    expect(entries.map((e) => [e.actor, e.door, e.action, e.targets, e.outcome])).toEqual([
      ['-', 'api', 'sign_in', [], 'refused'],
      ['-', 'api', 'sign_in', [], 'refused'],
    ]);
    expect(JSON.stringify(entries)).not.toContain('15550001111');
  });

  it('are slowed per address: 429 with Retry-After, the right token too, until the wait is over', async () => {
    const a = auditedAdmin({ throttle: { freeFailures: 2, baseDelayMs: 10_000 } });
    const wrong = () => a.as(undefined).get('/status').set('authorization', 'Bearer wrong-token-000000000');
    expect((await wrong()).status).toBe(401);
    expect((await wrong()).status).toBe(401);
    expect((await wrong()).status).toBe(401); // the third failure sets the wait
    const held = await a.as('operator').get('/dead-letters');
    expect(held.status).toBe(429);
    expect(held.body.error.code).toBe('too_many_attempts');
    expect(held.headers['retry-after']).toBe('10');
    // Only the sign-ins that were heard are recorded.
    expect((await a.entries()).length).toBe(3);

    a.f.clock.advance(10_000);
    expect((await a.as('operator').get('/dead-letters')).status).toBe(200);
    // The success started the address afresh.
    expect((await wrong()).status).toBe(401);
    expect((await a.as('operator').get('/dead-letters')).status).toBe(200);
  });
});

describe('the CLI door', () => {
  it("records the CLI's calls with the door cli", async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    const url = await listen(a);
    const cli = adminClientFrom(parseConfig({}), url, TOKENS.operator);
    expect((await cli.call('POST', '/dead-letters/ev-1/replay')).status).toBe(200);
    await adminClientFrom(parseConfig({}), url, 'not-a-token-of-anyone').call('GET', '/status');
    expect((await a.entries()).map((e) => [e.actor, e.door, e.action, e.outcome])).toEqual([
      ['integration', 'cli', 'dead_letter.replay', 'ok'],
      ['-', 'cli', 'sign_in', 'refused'],
    ]);
  });

  it('`emr-bridge audit` prints the filtered trail', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    await a.as('operator').post('/dead-letters/ev-1/replay');
    await a.as('viewer').post('/dead-letters/ev-1/dismiss', { reason: 'x' });
    const url = await listen(a);
    const res = await captureOutput(() => main(['audit', '--admin-url', url, '--admin-token', TOKENS.viewer, '--action', 'dead_letter.replay']));
    expect(res.code, res.err).toBe(0);
    const printed = JSON.parse(res.out);
    expect(printed.entries.map((e: { actor: string; outcome: string }) => [e.actor, e.outcome])).toEqual([['integration', 'ok']]);
    expect(printed.nextBefore).toBeNull();
  });
});
