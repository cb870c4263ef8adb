/**
 * The shipped alerting (deploy/prometheus/) and the dashboard (deploy/grafana/): promtool checks the rules and runs
 * their unit tests; every alert has a test where it fires and one where it does not, a severity and a runbook
 * section; every metric name a rule or a panel uses is one the relay declares (against a running relay:
 * test/integration/metric-names.test.ts).
 *
 * promtool is built once from the pinned Prometheus Go module by bin/setup-promtool.sh (cached); without Go this
 * file's promtool tests fail (never skip) when it cannot be had, naming npm run setup:tools.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createRelayMetrics } from '../../../src/observability/relay-metrics.js';
import { RelayStats } from '../../../src/pipeline/relay-stats.js';
import {
  checkShippedNames,
  DASHBOARD_FILE,
  dashboardUses,
  metricNamesIn,
  readDashboard,
  readRules,
  RULES_FILE,
  RULES_TEST_FILE,
  ruleUses,
} from '../../support/metric-names.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);
const rulesText = readFileSync(RULES_FILE, 'utf8');
const rules = readRules(rulesText);
const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);

interface RuleTests {
  rule_files: string[];
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

/** What the relay's registry declares, as RelayObservability builds it: the default process and Node.js metrics plus the relay's. */
async function declaredByTheRelay(): Promise<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  createRelayMetrics(registry, new RelayStats(), { version: 'test' });
  return registry.metrics();
}

describe('the Prometheus rules and the Grafana dashboard', () => {
  let promtool: string | null = null;
  let promtoolProblem = '';
  const scratch = mkdtempSync(join(tmpdir(), 'outbox-tail-rules-'));

  beforeAll(async () => {
    // The first run builds promtool (minutes, once per machine); later runs only find it.
    try {
      const { stdout } = await run('bash', [`${ROOT}bin/setup-promtool.sh`], { maxBuffer: 1 << 24 });
      promtool = stdout.trim().split('\n').pop()!;
    } catch (error) {
      promtoolProblem = (error as { stderr?: string }).stderr || (error as Error).message;
    }
  }, 30 * 60_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** promtool's path; a missing one fails the test (never a skip), with what bin/setup-promtool.sh said. */
  const needPromtool = (_ctx: TestContext): string => {
    if (promtool) return promtool;
    throw new Error(`promtool is missing, and the rule tests need it: run npm run setup:tools (bin/setup-promtool.sh said\n${promtoolProblem})`);
  };

  const promtoolRun = async (tool: string, args: string[]) =>
    run(tool, args, { cwd: `${ROOT}deploy/prometheus` }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );

  it('promtool check rules accepts every rule', async (ctx) => {
    const tool = needPromtool(ctx);
    const { code, output } = await promtoolRun(tool, ['check', 'rules', RULES_FILE]);
    expect(output, output).toContain(`SUCCESS: ${rules.groups.flatMap((g) => g.rules).length} rules found`);
    expect(code).toBe(0);
  });

  it('promtool test rules passes every unit test', async (ctx) => {
    const tool = needPromtool(ctx);
    const { code, output } = await promtoolRun(tool, ['test', 'rules', RULES_TEST_FILE]);
    expect(output, output).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('the unit tests catch a rule that fires too late and one whose annotation changed (broken copies of the rules)', async (ctx) => {
    const tool = needPromtool(ctx);
    const broken = (name: string, from: string, to: string) => {
      expect(rulesText).toContain(from);
      const target = mkdtempSync(join(scratch, `${name}-`));
      writeFileSync(join(target, 'outbox-tail.rules.yml'), rulesText.replace(from, to));
      copyFileSync(RULES_TEST_FILE, join(target, 'outbox-tail.rules.test.yml'));
      return promtoolRun(tool, ['test', 'rules', join(target, 'outbox-tail.rules.test.yml')]);
    };
    const late = await broken(
      'late',
      'expr: max by (job, instance) (outbox_tail_stalled) == 1\n        for: 1m',
      'expr: max by (job, instance) (outbox_tail_stalled) == 1\n        for: 10m',
    );
    expect(late.code).not.toBe(0);
    expect(late.output).toMatch(/alertname: OutboxTailStalled/);
    const runbook = await broken('runbook', 'runbook_url: docs/alerting.md#outboxtaildeadletters', 'runbook_url: docs/alerting.md#deadletters');
    expect(runbook.code).not.toBe(0);
    expect(runbook.output).toMatch(/alertname: OutboxTailDeadLetters/);
  });

  it('every alert has a unit test where it fires and one where it stays silent', () => {
    const tests = parseYaml(readFileSync(RULES_TEST_FILE, 'utf8')) as RuleTests;
    expect(tests.rule_files).toEqual(['outbox-tail.rules.yml']);
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    const untested = alerts.flatMap((a) => {
      const mine = cases.filter((c) => c.alertname === a.alert);
      return [
        ...(mine.some((c) => c.exp_alerts.length > 0) ? [] : [`${a.alert}: no case where it fires`]),
        ...(mine.some((c) => c.exp_alerts.length === 0) ? [] : [`${a.alert}: no case where it stays silent`]),
      ];
    });
    expect(untested).toEqual([]);
    // and no case tests an alert that does not exist
    expect(cases.map((c) => c.alertname).filter((n) => !alerts.some((a) => a.alert === n))).toEqual([]);
    expect(alerts.length).toBeGreaterThanOrEqual(13);
  });

  it('every alert has a severity, a summary, a description and a runbook_url to its own section of docs/alerting.md', () => {
    const page = readFileSync(`${ROOT}docs/alerting.md`, 'utf8');
    const anchors = new Set(
      [...page.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const a of alerts) {
      expect(['critical', 'warning'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toBeTruthy();
      expect(a.annotations?.description, a.alert).toBeTruthy();
      expect(a.annotations?.runbook_url, a.alert).toBe(`docs/alerting.md#${a.alert!.toLowerCase()}`);
      expect(anchors, `docs/alerting.md has no section "${a.alert}"`).toContain(a.alert!.toLowerCase());
      // the page's summary table has a line for it, with its severity
      expect(page, `docs/alerting.md's table has no line for ${a.alert}`).toMatch(
        new RegExp(`^\\| \\[${a.alert}\\]\\(#${a.alert!.toLowerCase()}\\) \\| ${a.labels!.severity} \\|`, 'm'),
      );
    }
  });

  it("every metric the rules and the dashboard's panels and variables use is one the relay declares", async () => {
    const { uses, recorded } = ruleUses(rules);
    const panelUses = dashboardUses(readDashboard());
    // the check has something to check: every alert, recording rule and panel target reads at least one name
    expect(uses.length).toBeGreaterThan(alerts.length);
    expect(new Set(panelUses.map((u) => u.name)).size).toBeGreaterThanOrEqual(25);
    expect([...recorded].every((name) => /^job:outbox_tail_[a-z_0-9]+:[a-z_0-9]+$/.test(name))).toBe(true);
    expect(checkShippedNames(await declaredByTheRelay())).toEqual([]);
  });

  it('the name check reports a misspelled metric in a rule, a recording rule name misspelled in an alert, and one in a panel', async () => {
    const scrape = await declaredByTheRelay();
    const misspelledRule = rulesText.replace('(outbox_tail_stalled)', '(outbox_tail_staled)');
    expect(misspelledRule).not.toBe(rulesText);
    expect(checkShippedNames(scrape, misspelledRule)).toEqual(['outbox_tail_staled (rule OutboxTailStalled (group outbox-tail.alerts))']);

    const misspelledRecording = rulesText.replace(
      'expr: job:outbox_tail_slot_lag_bytes:max > 1073741824',
      'expr: job:outbox_tail_slot_lag_byte:max > 1073741824',
    );
    expect(misspelledRecording).not.toBe(rulesText);
    expect(checkShippedNames(scrape, misspelledRecording)).toEqual([
      'job:outbox_tail_slot_lag_byte:max (rule OutboxTailSlotLagHigh (group outbox-tail.alerts))',
    ]);

    const dashboardText = readFileSync(DASHBOARD_FILE, 'utf8');
    const misspelledPanel = dashboardText.replace('process_resident_memory_bytes{', 'process_resident_memory_byte{');
    expect(misspelledPanel).not.toBe(dashboardText);
    expect(checkShippedNames(scrape, undefined, misspelledPanel)).toEqual(['process_resident_memory_byte (panel "Memory" target A)']);
  });

  it('reads metric names from PromQL by its grammar: functions, labels, keywords and durations are not names', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le, job) (rate(a_bucket{job="x", le!="1"}[5m]))) > 30 and on (job) b offset 5m or time() - max(c:d:e) unless absent(f)',
      ),
    ).toEqual(['a_bucket', 'b', 'c:d:e', 'f']);
    expect(() => metricNamesIn('sum(rate(x[5m])')).toThrow(/does not parse/);
    expect(() => metricNamesIn('{__name__="x"}')).toThrow(/__name__/);
  });

  it('the dashboard is a Grafana dashboard whose panels read the chosen data source, job and relays', () => {
    const dashboard = readDashboard() as unknown as {
      uid: string;
      panels: Array<{ id: number; type: string; title: string; datasource?: { uid: string }; targets?: Array<{ expr: string; refId: string }> }>;
      templating: { list: Array<{ name: string }> };
    };
    expect(dashboard.uid).toBe('outbox-tail');
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'job', 'instance']);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const t of panel.targets!) expect(t.expr, `${panel.title} ${t.refId}`).toMatch(/job="\$job"/);
    }
    // what the dashboard is for: lag, throughput, latency, errors, memory
    const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    for (const name of [
      'outbox_tail_slot_lag_bytes',
      'outbox_tail_records_published_total',
      'outbox_tail_publish_latency_seconds_bucket',
      'outbox_tail_dead_lettered_total',
      'outbox_tail_restarts_total',
      'process_resident_memory_bytes',
    ]) {
      expect(
        exprs.some((e) => e.includes(name)),
        name,
      ).toBe(true);
    }
  });
});
