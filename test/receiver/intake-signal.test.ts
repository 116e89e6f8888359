// What the receiver tells intake first (src/work/intake-priority.ts) of each webhook: that it arrived, and that
// it was answered, whatever the answer (stored, refused), so the webhooks in flight it counts go back to zero.
import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import { receiverFixture, type ReceiverFixture } from '../support/receiver-app.ts';
import { signedWebhook } from '../support/webhooks.ts';

let f: ReceiverFixture | undefined;
afterEach(() => f?.close());

it('says each webhook arrived and was answered, a stored one and a refused one alike', async () => {
  const log: string[] = [];
  let inFlight = 0;
  f = receiverFixture({
    arrived: () => {
      log.push(`arrived (${++inFlight} in flight)`);
      return () => log.push(`answered (${--inFlight} in flight)`);
    },
  });
  const post = (w: { body: Buffer; headers: Record<string, string> }) =>
    request(f!.app.callback()).post('/webhooks/service').set(w.headers).send(w.body.toString('utf8'));

  expect((await post(signedWebhook(f.clock.now()))).status).toBe(200);
  expect((await post(signedWebhook(f.clock.now(), { secrets: ['not the secret'] }))).status).toBe(401);
  expect(log).toEqual(['arrived (1 in flight)', 'answered (0 in flight)', 'arrived (1 in flight)', 'answered (0 in flight)']);
});
