// The HL7 v2 port forgets the marks of messages it took (MSH-3/4/10, kept to acknowledge a repeat without acting
// twice) with the processor's retention, at RETENTION_EVENT_ID_DAYS; what it keeps of its claims and of the EMR's
// ids stays.
import { Hl7Message } from '@medplum/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/clock.ts';
import { parseConfig } from '../../../src/config.ts';
import { createHl7Emr, type Hl7Emr } from '../../../src/emr/hl7v2/index.ts';
import { createMllpClient } from '../../../src/emr/hl7v2/mllp/client.ts';
import { emrSettings } from '../../../src/emr/settings.ts';
import { silentLogger } from '../../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../../src/paths.ts';
import { createRetention } from '../../../src/processor/retention.ts';
import { openDatabase } from '../../../src/sqlite/open.ts';
import { createSqliteEmrState } from '../../../src/storage/sqlite/emr-state.ts';
import { createSqliteProcessorStores } from '../../../src/storage/sqlite/processor-stores.ts';

const DAY = 86_400_000;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const notification = (controlId: string) =>
  Hl7Message.parse(
    [
      `MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260115100000+0000||ADT^A28^ADT_A05|${controlId}|P|2.5.1`,
      'EVN|A28|20260115100000+0000',
      'PID|1||pat_1^^^SERVICE^PI~MRN000001^^^HOSPITAL^MR||Doe^Jane||||||||+15550001111',
      'PV1|1|N',
    ].join('\r'),
  );

describe('the HL7 v2 port and retention', () => {
  it('forgets the marks of messages taken once past RETENTION_EVENT_ID_DAYS, and keeps the MRN it learnt', async () => {
    const clock = createManualClock();
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    closers.push(async () => db.close());
    const config = parseConfig({
      EMR_PROTOCOL: 'hl7v2',
      HL7_SEND_URL: 'mllp://127.0.0.1:9',
      HL7_LISTEN_HOST: '127.0.0.1',
      HL7_LISTEN_PORT: '0',
      SERVICE_BASE_URL: 'bundled',
    });
    const state = createSqliteEmrState(db, clock)('hl7v2');
    const port: Hl7Emr = await createHl7Emr({
      settings: emrSettings(config.emr, 'hl7v2'),
      sendUrl: () => 'mllp://127.0.0.1:9',
      tls: {},
      clock,
      logger: silentLogger(),
    });
    closers.push(() => port.close());
    await port.start!({
      state,
      recordIdentified: (_record, entries) => state.putMany(entries ?? []),
      documentPushed: async () => undefined,
      documentCancelled: async () => 'unknown',
    });
    const client = createMllpClient({ url: port.listenerUrl, ackTimeoutMs: 2_000, clock });
    closers.push(() => client.close());

    const ack = await client.send(notification('N1'));
    expect(ack.getSegment('MSA')?.getField(1)?.toString()).toBe('AA');
    expect(await state.get('in:EMR|HOSPITAL|N1')).toBe('AA');

    const retention = createRetention({
      store: createSqliteProcessorStores(db, clock).retention,
      pruneDocuments: async () => 0,
      pruneEmr: (cutoff) => port.pruneBefore!(cutoff),
      clock,
      settings: config.retention,
    });
    clock.advance((config.retention.eventIdDays - 1) * DAY);
    expect((await retention.prune()).emr).toBe(0);
    clock.advance(2 * DAY);
    expect((await retention.prune()).emr).toBe(1);
    expect(await state.get('in:EMR|HOSPITAL|N1')).toBeUndefined();
    expect(await state.get('mrn:pat_1')).toBe('MRN000001');
  });
});
