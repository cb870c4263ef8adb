/**
 * The metric names the shipped Prometheus rules (deploy/prometheus/outbox-tail.rules.yml) and Grafana dashboard
 * (deploy/grafana/outbox-tail.json) use, and the check that a relay exports each of them. PromQL is read with
 * Prometheus's own grammar (@prometheus-io/lezer-promql), so a name is exactly a vector selector's metric name, never
 * a function, a label or a keyword.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RULES_FILE = `${ROOT}deploy/prometheus/outbox-tail.rules.yml`;
export const RULES_TEST_FILE = `${ROOT}deploy/prometheus/outbox-tail.rules.test.yml`;
export const DASHBOARD_FILE = `${ROOT}deploy/grafana/outbox-tail.json`;

/** Series Prometheus writes itself for every target, not the relay. */
const PROMETHEUS_SERIES = new Set(['up']);

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}

/** Where a name was used, for the failure message. */
export interface Use {
  name: string;
  where: string;
}

/** The metric names the vector selectors of one PromQL expression read. Throws on an expression that does not parse. */
export function metricNamesIn(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | null = null;
  tree.iterate({
    enter(node) {
      if (node.type.isError && error === null) error = node.from;
      if (node.name === 'VectorSelector') {
        const id = node.node.getChild('Identifier');
        if (id) names.push(expr.slice(id.from, id.to));
        // {__name__="..."} selects by name too: keep the names countable by refusing that form
        else if (/__name__/.test(expr.slice(node.from, node.to))) throw new Error(`select metrics by name, not with __name__: ${expr}`);
      }
    },
  });
  if (error !== null) throw new Error(`PromQL does not parse at offset ${error}: ${expr}`);
  return names;
}

export function readRules(text = readFileSync(RULES_FILE, 'utf8')): RuleFile {
  return parseYaml(text) as RuleFile;
}

export function ruleUses(rules: RuleFile): { uses: Use[]; recorded: Set<string> } {
  const uses: Use[] = [];
  const recorded = new Set<string>();
  for (const group of rules.groups) {
    for (const rule of group.rules) {
      if (rule.record) recorded.add(rule.record);
      const where = `rule ${rule.alert ?? rule.record} (group ${group.name})`;
      for (const name of metricNamesIn(rule.expr)) uses.push({ name, where });
    }
  }
  return { uses, recorded };
}

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string; refId?: string }>;
  panels?: Panel[];
}

interface Dashboard {
  panels: Panel[];
  templating?: { list: Array<{ name: string; query?: string | { query?: string } }> };
}

/** Grafana's variables, replaced by something PromQL parses ($__rate_interval in a range, $job in a label value). */
function withoutVariables(expr: string): string {
  return expr.replace(/\[\$\{?__(?:rate_)?interval\}?\]/g, '[5m]').replace(/\$\{?(\w+)(?::\w+)?\}?/g, '$1');
}

export function readDashboard(text = readFileSync(DASHBOARD_FILE, 'utf8')): Dashboard {
  return JSON.parse(text) as Dashboard;
}

export function dashboardUses(dashboard: Dashboard): Use[] {
  const uses: Use[] = [];
  const visit = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (!target.expr) continue;
        for (const name of metricNamesIn(withoutVariables(target.expr))) uses.push({ name, where: `panel "${panel.title}" target ${target.refId}` });
      }
      visit(panel.panels ?? []);
    }
  };
  visit(dashboard.panels);
  for (const variable of dashboard.templating?.list ?? []) {
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    // label_values(metric, label) / label_values(selector, label)
    const selector = query ? /^label_values\((.+),\s*\w+\)$/.exec(query.trim())?.[1] : undefined;
    if (selector) for (const name of metricNamesIn(withoutVariables(selector))) uses.push({ name, where: `variable $${variable.name}` });
  }
  return uses;
}

/**
 * The series names a scrape in the Prometheus text format offers: every family its # TYPE lines declare (so a
 * labelled metric with no sample yet counts, such as the exactly-once commit histogram of an at-least-once relay),
 * with a histogram's _bucket, _sum and _count and a summary's _sum and _count, plus every sample's name.
 */
export function exportedNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const line of scrape.split('\n')) {
    const type = /^# TYPE (\S+) (\w+)/.exec(line);
    if (type) {
      const [, name, kind] = type as unknown as [string, string, string];
      names.add(name);
      if (kind === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      if (kind === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
    } else if (line && !line.startsWith('#')) {
      names.add(/^[^{\s]+/.exec(line)![0]);
    }
  }
  return names;
}

/** The uses whose name neither the scrape exports, nor a recording rule records, nor Prometheus writes itself. */
export function missingNames(uses: readonly Use[], exported: ReadonlySet<string>, recorded: ReadonlySet<string>): Use[] {
  return uses.filter((u) => !exported.has(u.name) && !recorded.has(u.name) && !PROMETHEUS_SERIES.has(u.name));
}

/** Every name the shipped rules and dashboard use that `scrape` does not offer, as readable lines (empty = all there). */
export function checkShippedNames(scrape: string, rulesText?: string, dashboardText?: string): string[] {
  const { uses, recorded } = ruleUses(readRules(rulesText));
  const all = [...uses, ...dashboardUses(readDashboard(dashboardText))];
  return missingNames(all, exportedNames(scrape), recorded).map((u) => `${u.name} (${u.where})`);
}
