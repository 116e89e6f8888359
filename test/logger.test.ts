// The logger's backstop: a webhook body logged by mistake leaks no patient data or secret.
import { describe, expect, it } from 'vitest';
import { captureLogger } from './support/log-capture.ts';
import { appointmentEventBody } from './support/webhooks.ts';

describe('createLogger redaction', () => {
  it('redacts names, phones, notes and tokens inside a logged webhook body', () => {
    const { lines, logger } = captureLogger();
    const event = appointmentEventBody();
    logger.info({ event, eventId: event.eventId }, 'oops, logged a body');
    logger.info(event, 'logged at the top level');
    const out = JSON.stringify(lines());
    for (const secret of ['Test Patient One', '+15550000001', 'Dr Test Doctor', 'Test Clinic Room 1', 'Synthetic test appointment', 'A-17'])
      expect(out).not.toContain(secret);
    expect(out).toContain(String(event.eventId));
    expect(out).toContain('[redacted]');
    expect(lines()[0]!.app).toBe('emr-bridge');
  });

  it('redacts document fields: label, file bytes, phones, names, message text', () => {
    const { lines, logger } = captureLogger();
    logger.info({
      request: {
        externalId: 'doc-1',
        patientName: 'Test Patient Two',
        patientPhone: '+15550000002',
        label: 'Blood panel for Test Patient Two',
        file: { base64: 'JVBERi0xLjQK', filename: 'panel.pdf' },
      },
      message: { text: 'Your lab report: Blood panel', phone: '+15550000002' },
    });
    const out = JSON.stringify(lines());
    for (const secret of ['Test Patient Two', '+15550000002', 'Blood panel', 'JVBERi0xLjQK', 'panel.pdf']) expect(out).not.toContain(secret);
    expect(out).toContain('doc-1');
  });

  it('redacts authorization headers and secrets', () => {
    const { lines, logger } = captureLogger();
    logger.info({ headers: { authorization: 'Bearer live_secret_key' }, config: { signingSecret: 'whsec_x', apiKey: 'live_y' } });
    const out = JSON.stringify(lines());
    for (const secret of ['live_secret_key', 'whsec_x', 'live_y']) expect(out).not.toContain(secret);
  });
});
