// How a delivery is filed: header values first (the interface sends them on every delivery), then the
// body's, then a hash of the bytes for a body that is neither.
import { describe, expect, it } from 'vitest';
import { identifyEvent } from '../../src/receiver/event-identity.ts';

const body = Buffer.from(JSON.stringify({ eventId: 'from-body', eventType: 'patient.created' }));

describe('identifyEvent', () => {
  it('uses the event-id and event-type headers when both are present', () => {
    expect(identifyEvent(body, { 'x-service-event-id': 'from-header', 'x-service-event-type': 'appointment.created' })).toEqual({
      eventId: 'from-header',
      eventType: 'appointment.created',
    });
  });

  it("falls back to the body's values for missing headers", () => {
    expect(identifyEvent(body, {})).toEqual({ eventId: 'from-body', eventType: 'patient.created' });
    expect(identifyEvent(body, { 'x-service-event-id': 'from-header' })).toEqual({ eventId: 'from-header', eventType: 'patient.created' });
  });

  it('files a body that is not JSON under a hash of its bytes', () => {
    const a = identifyEvent(Buffer.from('not json'), {});
    expect(a.eventId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a.eventType).toBe('unknown');
    expect(identifyEvent(Buffer.from('not json'), {}).eventId).toBe(a.eventId);
  });

  it('ignores absurdly long identifiers', () => {
    expect(identifyEvent(Buffer.from('{}'), { 'x-service-event-id': 'x'.repeat(500) }).eventId).toMatch(/^sha256:/);
  });
});
