// docs/alerts.yml, the example Prometheus alerting rules: each rule is complete (expr, for, a severity, a
// summary), and every emr_bridge_* metric a rule names is exported by a running adapter's /metrics.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { ROOT } from '../../bench/support/child.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';

const rulesText = readFileSync(join(ROOT, 'docs/alerts.yml'), 'utf8');

/** The rules as blocks of lines, one per `- alert:` entry (the file keeps each field on one line). */
function rules(): { name: string; lines: string[] }[] {
  const blocks = rulesText.split(/^\s*- alert:\s*/m).slice(1);
  return blocks.map((b) => ({ name: b.split('\n')[0]!.trim(), lines: b.split('\n') }));
}

const field = (lines: string[], key: string) => lines.map((l) => new RegExp(`^\\s*${key}:\\s*(.+)$`).exec(l)?.[1]).find(Boolean);

const namedMetrics = (expr: string) => [...expr.matchAll(/\bemr_bridge_[a-z0-9_]+/g)].map((m) => m[0]);

/** Every sample name /metrics can carry: each declared metric, and a histogram's or summary's series. */
function exportedNames(metricsText: string): Set<string> {
  const names = new Set<string>();
  for (const m of metricsText.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    names.add(name);
    if (type === 'histogram' || type === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
  }
  return names;
}

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-alerts-'));
let adapter: RunningAdapter;
beforeAll(async () => {
  const config = quietAdapterConfig(dir, 'alerts-admin-token-0001');
  adapter = await startAdapter({ config, logger: silentLogger(), emr: createMemoryEmr() });
});
afterAll(async () => {
  await adapter?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/alerts.yml', () => {
  it('gives every rule an expression, a duration, a severity and a summary', () => {
    expect(rules().length).toBeGreaterThanOrEqual(4);
    for (const r of rules()) {
      expect(field(r.lines, 'expr'), r.name).toBeTruthy();
      expect(field(r.lines, 'for'), r.name).toMatch(/^\d+[smh]$/);
      expect(field(r.lines, 'severity'), r.name).toMatch(/^(page|ticket)$/);
      expect(field(r.lines, 'summary'), r.name).toBeTruthy();
    }
  });

  it('alerts on the waiting ages (events waiting for a mapping too), the dependencies and the dead letters', () => {
    const named = new Set(rules().flatMap((r) => namedMetrics(field(r.lines, 'expr') ?? '')));
    for (const m of [
      'emr_bridge_oldest_unprocessed_event_age_seconds',
      'emr_bridge_oldest_unsent_document_age_seconds',
      'emr_bridge_oldest_undelivered_mapping_age_seconds',
      'emr_bridge_dependency_up',
      'emr_bridge_processor_alerts_total',
      'emr_bridge_events_waiting_oldest_seconds',
    ])
      expect(named, m).toContain(m);
  });

  it('names only metrics a running adapter exports', async () => {
    const res = await fetch(`${adapter.url}/metrics`);
    expect(res.status).toBe(200);
    const exported = exportedNames(await res.text());
    const named = rules().flatMap((r) => namedMetrics(field(r.lines, 'expr') ?? '').map((metric) => ({ rule: r.name, metric })));
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((n) => !exported.has(n.metric))).toEqual([]);
  });
});
