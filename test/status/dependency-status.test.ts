// The dependency status: one alert when a dependency starts failing and one when it recovers, whatever
// the number of calls in between; an EMR that refuses one kind of call stays failing while others pass.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { EmrError } from '../../src/emr/errors.ts';
import { createDependencyStatus, observed } from '../../src/status/dependency-status.ts';
import { captureLogger } from '../support/log-capture.ts';

function fixture() {
  const clock = createManualClock();
  const log = captureLogger('info');
  const status = createDependencyStatus({ clock, logger: log.logger });
  const alerts = () =>
    log
      .lines()
      .filter((l) => l.alert === true)
      .map((l) => l.msg);
  const emr = (fail: { reads?: Error; writes?: Error }) =>
    observed(
      {
        async read() {
          if (fail.reads) throw fail.reads;
        },
        async write() {
          if (fail.writes) throw fail.writes;
        },
      },
      'emr',
      status,
    );
  return { clock, status, alerts, emr, emrState: () => status.components().find((c) => c.name === 'emr')! };
}

const refused = () => new EmrError('emr_unauthorized', 'the EMR answered 403 to GET Binary with a fresh token', 403);
const down = () => new EmrError('emr_unavailable', 'no answer from the EMR (ECONNREFUSED)');

describe('dependency status', () => {
  it('says failing once, with the reason and since when, and ended once', async () => {
    const f = fixture();
    const fail: { reads?: Error } = { reads: down() };
    const emr = f.emr(fail);
    for (let i = 0; i < 5; i++) await emr.read().catch(() => undefined);
    expect(f.emrState()).toMatchObject({
      ok: false,
      reason: 'emr_unavailable: no answer from the EMR (ECONNREFUSED)',
      since: new Date(f.clock.now()).toISOString(),
    });
    delete fail.reads;
    f.clock.advance(5_000);
    await emr.read();
    await emr.read();
    expect(f.emrState()).toMatchObject({ ok: true, reason: null, since: new Date(f.clock.now()).toISOString() });
    expect(f.alerts()).toEqual(['emr is failing', 'emr incident ended']);
  });

  it('keeps an incident on while only other kinds of call pass, and ends it when the refused kind passes', async () => {
    const f = fixture();
    const fail: { reads?: Error } = { reads: refused() };
    const emr = f.emr(fail);
    for (let i = 0; i < 3; i++) {
      await emr.read().catch(() => undefined);
      await emr.write();
    }
    expect(f.emrState().ok).toBe(false);
    expect(f.alerts()).toEqual(['emr is failing']);
    delete fail.reads;
    await emr.read();
    expect(f.emrState().ok).toBe(true);
    expect(f.alerts()).toEqual(['emr is failing', 'emr incident ended']);
  });

  it('takes a refusal of one call (not retryable) as the dependency answering', async () => {
    const f = fixture();
    const emr = f.emr({ reads: new EmrError('emr_rejected', 'the EMR refused GET Patient (404)', 404) });
    await emr.read().catch(() => undefined);
    expect(f.emrState().ok).toBe(true);
    expect(f.alerts()).toEqual([]);
  });
});
