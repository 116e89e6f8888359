// The overview's chart: events received and applied per minute over the last 24 hours, from the page's
// JSON endpoint (data-src on #chart), drawn with uPlot (served from the npm package). The summary under
// the chart says the same in words, for screen readers and for the tests.

function totals(perMinute) {
  let received = 0;
  let applied = 0;
  let peak = 0;
  for (const m of perMinute) {
    received += m.received;
    applied += m.applied;
    peak = Math.max(peak, m.received, m.applied);
  }
  return { received, applied, peak };
}

function draw(el, perMinute) {
  const xs = perMinute.map((m) => m.minute / 1000);
  const data = [xs, perMinute.map((m) => m.received), perMinute.map((m) => m.applied)];
  const width = () => Math.max(280, el.clientWidth);
  const plot = new window.uPlot(
    {
      width: width(),
      height: 280,
      tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{ label: 'UTC' }, { label: 'events per minute' }],
      series: [{}, { label: 'received', stroke: '#0b5cad', width: 2 }, { label: 'applied', stroke: '#1a7f37', width: 2, dash: [6, 3] }],
    },
    data,
    el,
  );
  new ResizeObserver(() => plot.setSize({ width: width(), height: 280 })).observe(el);
  return plot;
}

async function start() {
  const el = document.getElementById('chart');
  const summary = document.getElementById('chart-summary');
  if (!el || !summary || !window.uPlot) return;
  summary.textContent = 'Loading the chart…';
  try {
    const res = await fetch(el.dataset.src, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    if (res.status === 401) {
      summary.textContent = 'Your session has ended: reload the page to sign in again.';
      return;
    }
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const overview = await res.json();
    const t = totals(overview.perMinute);
    draw(el, overview.perMinute);
    el.dataset.received = String(t.received);
    el.dataset.applied = String(t.applied);
    summary.textContent = `Last 24 hours: ${t.received} events received and ${t.applied} applied; at most ${t.peak} in one minute.`;
  } catch (err) {
    summary.textContent = `The chart could not be loaded (${err.message}); the totals above still hold.`;
  }
}

document.addEventListener('DOMContentLoaded', start);
