import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runKeys } from '../../src/redis/keys.js';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';
import type { WorkerProcess } from '../helpers/harness.js';
import { promqlReferences } from './promql-names.js';
import { metricsPortOf, type Scrape, scrape } from './scrape.js';

const dir = resolve(import.meta.dirname, '../../config/observability');

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string };
}

const rules = (
  parse(readFileSync(join(dir, 'prometheus-alerts.yml'), 'utf8')) as { groups: { rules: AlertRule[] }[] }
).groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(readFileSync(join(dir, 'grafana-dashboard.json'), 'utf8')) as {
  uid: string;
  panels: { id: number; title: string; targets: { expr: string; refId: string }[] }[];
};
const expressions = [
  ...rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  ...dashboard.panels.flatMap((panel) =>
    panel.targets.map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr })),
  ),
];

/**
 * The shipped dashboard and alert rules name only series that Ratchet serves: every metric and label their
 * expressions use is read against real scrapes of the API and a worker after a workload.
 */
describe('the Grafana dashboard and the Prometheus alert rules', () => {
  let api: ApiHarness | undefined;
  let worker: WorkerProcess | undefined;
  const scrapes: Scrape[] = [];

  beforeAll(async () => {
    api = await ApiHarness.start({
      script: {
        // A third run asks a person, who never answers: the question's timeout closes it on the worker.
        rules: [
          {
            when: { role: 'user', contains: 'colour' },
            reply: {
              tool_calls: [
                {
                  name: 'ask_user',
                  arguments: { question: 'Which colour?', timeout_s: 0.2, default: 'blue' },
                },
              ],
            },
          },
        ],
        replies: [
          {
            tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }],
            usage: { input_tokens: 3, output_tokens: 4 },
            // Long enough to see the call arrive and kill its worker on a loaded machine, before it answers.
            delay_ms: 6_000,
          },
          { tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
          { text: 'done' },
        ],
      },
      worker: false,
      harness: {
        // The third model call comes within 300 ms of the second, and waits: rate-limit series too.
        provider: { rate_limit: { rpm: 1, window_ms: 300 } },
        config: {
          telemetry: { metrics: { enabled: true, worker_port: 0 } },
          pricing: { test: { input: 1, output: 1 } },
        },
      },
    });
    // Two workers; the one making the first model call is killed, so the survivor's series include a
    // takeover and a repeated call.
    const workers = [api.harness.spawnWorker(), api.harness.spawnWorker()];
    const { runId, sessionId } = await api.harness.engine.startRun({ input: 'go' });
    await waitFor(() => (api?.harness.modelCalls().length ?? 0) > 0, 30_000, 'the first model call');
    // Killed once the call is counted in the run's journal (calls:1), which is what makes the survivor's call
    // a repeat: on a loaded machine the count can land after the request reaches the model.
    const journal = runKeys(
      { prefix: api.harness.prefix, shards: api.harness.loaded.config.redis.shards },
      sessionId,
      runId,
    ).journal;
    await waitFor(
      async () => Number((await api?.harness.redis.hget(journal, 'calls:1')) ?? 0) >= 1,
      30_000,
      'the first model call to be counted',
    );
    const doomed = workers.find((candidate) => candidate.child.pid === api?.harness.modelCalls()[0]?.pid);
    await doomed?.kill();
    worker = workers.find((candidate) => candidate !== doomed);
    expect((await api.harness.engine.waitForRun(runId, { timeoutMs: 45_000 })).status).toBe('completed');
    // A second run, all on the survivor (which then has every series of a run's start too).
    const second = await api.harness.engine.startRun({ input: 'again' });
    expect((await api.harness.engine.waitForRun(second.runId, { timeoutMs: 45_000 })).status).toBe(
      'completed',
    );
    const asking = await api.harness.engine.startRun({ input: 'pick a colour' });
    expect((await api.harness.engine.waitForRun(asking.runId, { timeoutMs: 45_000 })).status).toBe(
      'completed',
    );
    await waitFor(() => metricsPortOf(worker?.output() ?? '') !== undefined, 30_000, 'the metrics listener');
    scrapes.push(await scrape(`http://127.0.0.1:${metricsPortOf(worker?.output() ?? '')}/metrics`));
    scrapes.push(await scrape(`${api.url}/metrics`));
    expect(scrapes[0]?.value('ratchet_model_calls_repeated_total')).toBe(1);
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  /** The family a series name belongs to (a histogram's _bucket, _sum and _count are its family's). */
  function familyOf(series: string) {
    for (const found of scrapes.map((taken) => taken.family(series))) if (found) return found;
    const base = series.replace(/_(bucket|sum|count)$/, '');
    for (const taken of scrapes) {
      const found = taken.family(base);
      if (found && found.type === 'HISTOGRAM' && base !== series) return found;
    }
    return undefined;
  }

  function labelsOf(series: string): Set<string> {
    const names = new Set<string>();
    for (const taken of scrapes) {
      const text = taken.text
        .split('\n')
        .filter((line) => line.startsWith(`${series}{`) || line.startsWith(`${series}_`));
      for (const line of text)
        for (const match of line.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) names.add(match[1] as string);
    }
    names.delete('le');
    return names;
  }

  it('are well-formed: every rule has an expression, a severity and a summary; every panel a query', () => {
    expect(rules.length).toBeGreaterThanOrEqual(8);
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'RatchetStuckRuns',
        'RatchetDeadWorkers',
        'RatchetTakeovers',
        'RatchetRunErrorRate',
        'RatchetCostPerHour',
        'RatchetBacklog',
      ]),
    );
    for (const rule of rules) {
      expect(rule.expr.trim(), rule.alert).not.toBe('');
      expect(['critical', 'warning', 'info']).toContain(rule.labels.severity);
      expect(rule.annotations.summary, rule.alert).toEqual(expect.any(String));
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    }
    expect(dashboard.uid).toBe('ratchet-overview');
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    for (const panel of dashboard.panels) expect(panel.targets.length, panel.title).toBeGreaterThan(0);
  });

  it('name only metrics that the API or a worker serves, with their types', () => {
    const problems: string[] = [];
    for (const { where, expr } of expressions) {
      const { metrics } = promqlReferences(expr);
      expect(metrics.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const metric of metrics) {
        const family = familyOf(metric);
        if (!family) problems.push(`${where}: ${metric} is not served`);
        else if (metric.endsWith('_bucket') && family.type !== 'HISTOGRAM')
          problems.push(`${where}: ${metric} is not a histogram's`);
        else if (/\b(rate|increase)\(\s*$/.test(expr.split(metric)[0] ?? '') && family.type === 'GAUGE')
          problems.push(`${where}: rate of the gauge ${metric}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('match and group by labels those metrics have', () => {
    const problems: string[] = [];
    for (const { where, expr } of expressions) {
      const references = promqlReferences(expr);
      for (const { metric, labels } of references.selectorLabels) {
        const known = labelsOf(metric.replace(/_(bucket|sum|count)$/, ''));
        for (const label of labels)
          if (!known.has(label)) problems.push(`${where}: ${metric} has no label ${label}`);
      }
      const all = new Set(
        references.metrics.flatMap((metric) => [...labelsOf(metric.replace(/_(bucket|sum|count)$/, ''))]),
      );
      // Prometheus adds instance and job to every scraped series; histogram_quantile needs le.
      for (const label of references.groupingLabels)
        if (!['instance', 'job', 'le'].includes(label) && !all.has(label))
          problems.push(`${where}: no metric has ${label}`);
    }
    expect(problems).toEqual([]);
  });

  it('pass promtool: the rules load, and their unit tests fire each alert on the series Ratchet serves', () => {
    const check = spawnSync('promtool', ['check', 'rules', 'prometheus-alerts.yml'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
    expect(check.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
    const unit = spawnSync('promtool', ['test', 'rules', 'prometheus-alerts.test.yml'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(unit.status, `${unit.stdout}${unit.stderr}`).toBe(0);
    // The unit tests name only series that Ratchet serves, like the rules.
    const series = [
      ...readFileSync(join(dir, 'prometheus-alerts.test.yml'), 'utf8').matchAll(/series: '([a-z_:]+)\{/g),
    ].map((match) => match[1] as string);
    expect(series.length).toBeGreaterThan(0);
    for (const name of series) expect(familyOf(name), name).toBeDefined();
  });

  it('reads every series name out of PromQL, and the check can fail', () => {
    expect(
      promqlReferences(
        'sum by (provider) (rate(a_total{x="1", y=~"b|c"}[5m])) / on() sum(b_count) > 0.2 and c',
      ),
    ).toEqual({
      metrics: ['a_total', 'b_count', 'c'],
      selectorLabels: [{ metric: 'a_total', labels: ['x', 'y'] }],
      groupingLabels: ['provider'],
    });
    expect(familyOf('ratchet_no_such_metric_total')).toBeUndefined();
    expect(familyOf('ratchet_step_duration_seconds_bucket')?.type).toBe('HISTOGRAM');
    expect(familyOf('ratchet_queue_jobs')?.type).toBe('GAUGE');
    expect(labelsOf('ratchet_runs_finished_total')).toEqual(new Set(['agent', 'status']));
    expect(labelsOf('ratchet_model_calls_repeated_total').has('cause')).toBe(true);
  });
});
