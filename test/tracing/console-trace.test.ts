// The console's event page leads to the trace: it shows the trace id of the event's receipt (stored with the inbox
// row when tracing was on), to paste into the tracing backend's search; nothing when there is none.
import { describe, expect, it } from 'vitest';
import { consoleApp, signedIn } from '../console/support/console-app.ts';

describe("the console's event page", () => {
  it("shows the receipt's trace id when the event has one, and no trace row when it has none", async () => {
    const c = consoleApp();
    const traced = c.data.events_.get('evt_applied_1')!;
    c.data.events_.set('evt_applied_1', { ...traced, traceId: '0af7651916cd43dd8448eb211c80319c' });
    const agent = await signedIn(c);
    const page = (await agent.get('/console/events/evt_applied_1').expect(200)).text;
    expect(page).toContain('<div><dt>Trace</dt><dd><code id="event-trace">0af7651916cd43dd8448eb211c80319c</code></dd></div>');
    const untraced = (await agent.get('/console/events/evt_dead_1').expect(200)).text;
    expect(untraced).not.toContain('event-trace');
  });
});
