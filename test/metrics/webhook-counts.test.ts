// The receiver's per-request metrics: counted without prom-client's label lookups on the request, and
// exported as before: one counter line per event type and duplicate flag, the latency histogram.
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.ts';

const line = (text: string, prefix: string) => text.split('\n').find((l) => l.startsWith(prefix));

describe('webhookAcknowledged', () => {
  it('counts by event type and duplicate flag, each scrape adding only what came since the last', async () => {
    const m = createMetrics();
    m.webhookAcknowledged('appointment.created', false, 0.002);
    m.webhookAcknowledged('appointment.created', false, 0.003);
    m.webhookAcknowledged('appointment.created', true, 0.004);
    m.webhookAcknowledged('patient.updated', false, 0.03);
    let text = await m.registry.metrics();
    expect(line(text, 'emr_bridge_webhook_events_received_total{event_type="appointment.created",duplicate="false"}')).toMatch(/ 2$/);
    expect(line(text, 'emr_bridge_webhook_events_received_total{event_type="appointment.created",duplicate="true"}')).toMatch(/ 1$/);
    expect(line(text, 'emr_bridge_webhook_events_received_total{event_type="patient.updated",duplicate="false"}')).toMatch(/ 1$/);
    expect(line(text, 'emr_bridge_webhook_events_received_total{event_type="patient.updated",duplicate="true"}')).toBeUndefined();
    expect(line(text, 'emr_bridge_webhook_ack_seconds_count')).toMatch(/ 4$/);
    expect(line(text, 'emr_bridge_webhook_ack_seconds_bucket{le="0.005"}')).toMatch(/ 3$/);

    text = await m.registry.metrics();
    expect(line(text, 'emr_bridge_webhook_events_received_total{event_type="appointment.created",duplicate="false"}')).toMatch(/ 2$/);
    m.webhookAcknowledged('appointment.created', false, 0.002);
    expect((await m.eventsReceived.get()).values.find((v) => v.labels.event_type === 'appointment.created' && v.labels.duplicate === 'false')?.value).toBe(3);
  });
});
