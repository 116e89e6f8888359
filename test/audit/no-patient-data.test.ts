// No audit row holds patient data: real admin actions whose requests carry a patient's name, phone, a label
// and a free-text reason (through the API and the CLI, on the adapter the composition root builds) are
// recorded, and no column of any audit row holds any of those texts.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClientFrom } from '../../src/cli/admin-client.ts';
import { parseConfig } from '../../src/config.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

const PATIENT = { name: 'Margarethe Quintero-Lindqvist', phone: '+15557654321', label: 'Thyroid panel for Margarethe' };
const REASON = `duplicate of the record of ${PATIENT.name}, phone ${PATIENT.phone}`;
const FORBIDDEN = [PATIENT.name, 'Quintero', PATIENT.phone, '5557654321', PATIENT.label, 'Thyroid', 'duplicate of the record'];

describe('the audit trail', () => {
  let zero: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
  const rows: Record<string, Record<string, unknown>[]> = {};

  beforeAll(async () => {
    zero = await startZeroConfigAdapter();
    const { adapter } = zero;
    const api = (method: string, path: string, body?: unknown, token = adapter.adminToken) =>
      fetch(`${adapter.adminUrl}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const document = (externalId: string) => ({
      documentType: 'lab_report',
      externalId,
      label: PATIENT.label,
      patientName: PATIENT.name,
      patientPhone: PATIENT.phone,
      file: { base64: PDF.toString('base64'), filename: 'thyroid-margarethe.pdf' },
    });
    expect((await api('POST', '/documents', document('lab-no-pii-1'))).status).toBe(202);
    // Refused by the route (a misspelt field), carrying the same data.
    expect((await api('POST', '/documents', { ...document('lab-no-pii-2'), patientPhon: PATIENT.phone })).status).toBe(400);
    expect((await api('POST', '/dead-letters/no-such-event/dismiss', { reason: REASON })).status).toBe(404);
    expect((await api('POST', '/dead-letters/replay', { eventType: 'appointment.created' })).status).toBe(200);
    // A failed sign-in whose "token" is patient data.
    expect((await api('GET', '/documents', undefined, `${PATIENT.name} ${PATIENT.phone}`)).status).toBe(401);
    // Through the CLI's client, the door `cli`.
    const cli = adminClientFrom(parseConfig({ DATA_DIR: zero.dir }), adapter.adminUrl, adapter.adminToken);
    expect((await cli.call('POST', '/documents', document('lab-no-pii-3'))).status).toBe(202);
    expect((await cli.call('POST', '/documents/lab-no-pii-3/retry')).status).toBe(409);

    const db = new Database(join(zero.dir, 'emr-bridge.db'), { readonly: true, fileMustExist: true });
    try {
      for (const table of ['audit_log', 'audit_targets']) rows[table] = db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }, 60_000);
  afterAll(async () => zero?.close());

  it('recorded the actions, each with its ids', () => {
    const log = rows.audit_log!.map((r) => [r.actor, r.door, r.action, JSON.parse(String(r.targets)), r.outcome]);
    expect(log).toEqual([
      ['admin', 'api', 'document.push', ['lab-no-pii-1'], 'ok'],
      ['admin', 'api', 'document.push', ['lab-no-pii-2'], 'refused'],
      ['admin', 'api', 'dead_letter.dismiss', ['no-such-event'], 'not_found'],
      ['admin', 'api', 'dead_letter.replay_all', ['eventType:appointment.created'], 'ok'],
      ['-', 'api', 'sign_in', [], 'refused'],
      ['admin', 'cli', 'document.push', ['lab-no-pii-3'], 'ok'],
      ['admin', 'cli', 'document.retry', ['lab-no-pii-3'], 'refused'],
    ]);
    expect(rows.audit_targets!.length).toBe(6);
  });

  it('holds no name, phone, label or reason text in any column of any row', () => {
    for (const [table, list] of Object.entries(rows))
      for (const row of list)
        for (const [column, value] of Object.entries(row)) for (const text of FORBIDDEN) expect(String(value), `${table}.${column}`).not.toContain(text);
  });
});
