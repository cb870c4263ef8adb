/**
 * Issue 12 item 6: docker/outbox-tail.service under a real systemd (PID 1 of
 * the systemd image, docker/images/systemd), installed as the README says:
 * the package in /opt/outbox-tail (from the image), and by this test the unit
 * in /etc/systemd/system, the settings in /etc/outbox-tail/outbox-tail.env,
 * the secrets as root-only files in /etc/outbox-tail/credentials/. The unit
 * is the repository's file, unchanged: every sandboxing directive stays.
 *
 *   - it starts (systemctl enable --now) and streams; rows reach Kafka;
 *   - the sandbox is in force on the running relay: a dynamic uid, no
 *     capabilities, no_new_privs, a seccomp filter, a read-only /, a private
 *     /tmp, /proc with hidepid, the credentials readable in $CREDENTIALS_DIRECTORY;
 *   - kill -9 of the main process: Restart= brings it back after RestartSec=5,
 *     and the rows written meanwhile arrive;
 *   - systemctl stop drains (shutdown, drained, stopped) and exits 0
 *     (Result=success, status 0), no restart follows;
 *   - journalctl -u outbox-tail -o cat holds the relay's JSON lines;
 *   - nothing lost: distinct ids in Kafka = rows written.
 *
 * The container: Podman with --systemd=always --cgroups=enabled (the engine
 * default is disabled) --cgroupns=private --cap-add SYS_ADMIN, joined to the
 * stack's network namespace; docker/images/systemd/container-init explains
 * each. This host's cgroup trees get nothing but the container's own cgroups
 * (checked below). The test needs the private engine (bin/with-engine.sh).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Lsn } from '../../src/shared/lsn.js';
import { KafkaCollector } from '../support/kafka-collector.js';
import { removeOwnContainers } from './support/cleanup.js';
import { startNetnsStack, type NetnsStack } from './support/netns-stack.js';
import { isPrivatePodmanEngine, podman, podmanOk } from './support/podman.js';
import { confirmedFlushLsn, OutboxWriter } from './support/writer.js';

const UNIT_FILE = fileURLToPath(new URL('../../docker/outbox-tail.service', import.meta.url));
const IMAGE = process.env.OUTBOX_TAIL_TC_SYSTEMD_IMAGE || 'localhost/outbox-tail/systemd:trixie';
const SLOT = 'containers_systemd';
const AGGREGATE = 'shipment';
const TOPIC = `outbox.event.${AGGREGATE}`;
const NAME = `outbox-tail-systemd-${process.pid}`;
/** The container's cgroups live under this parent in each v1 hierarchy; removed afterwards. */
const CGROUP_PARENT = `/outbox-tail-test-${process.pid}`;
const CGROUP_ROOT = '/sys/fs/cgroup';

function report(line: string): void {
  process.stdout.write(`[systemd-unit] ${line}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a command in the systemd container as root. */
async function sh(script: string, timeoutMs = 60_000): Promise<string> {
  return podmanOk(['exec', NAME, 'sh', '-c', script], { timeoutMs });
}

async function unitProps(...names: string[]): Promise<Record<string, string>> {
  const out = await sh(`systemctl show outbox-tail ${names.map((n) => `-p ${n}`).join(' ')}`);
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** journalctl -u outbox-tail -o cat, and its JSON lines parsed. Through a file: see lostStreamSync. */
async function journal(): Promise<{ text: string; json: Array<Record<string, unknown>> }> {
  await sh('journalctl -u outbox-tail -o cat --no-pager > /var/tmp/outbox-tail-journal.txt');
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tail-journal-'));
  let text: string;
  try {
    await podmanOk(['cp', `${NAME}:/var/tmp/outbox-tail-journal.txt`, join(dir, 'journal.txt')]);
    text = readFileSync(join(dir, 'journal.txt'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const json: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      json.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a JSON line cut by the journal's line limit would show here
    }
  }
  return { text, json };
}

/** How many of the relay's journal lines carry "event":"<event>" (a small output: no file needed). */
async function countEvent(event: string): Promise<number> {
  return Number((await sh(`journalctl -u outbox-tail -o cat --no-pager | grep -c '"event":"${event}"' || true`)).trim());
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Top-level cgroups of the host's name=systemd and cgroup2 trees (where systemd must NOT write). */
function hostCgroupTops(): string[] {
  const out: string[] = [];
  for (const h of ['systemd', 'unified']) {
    const dir = join(CGROUP_ROOT, h);
    if (!existsSync(dir)) continue;
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(`${h}/${e.name}`);
  }
  return out.sort();
}

/** Removes the cgroup parent Podman made for the container (and conmon's), once empty. */
async function removeCgroupParent(): Promise<void> {
  if (!existsSync(CGROUP_ROOT)) return;
  for (const h of readdirSync(CGROUP_ROOT)) {
    const parent = join(CGROUP_ROOT, h, CGROUP_PARENT);
    if (!existsSync(parent)) continue;
    // conmon exits exit_command_delay (5 s) after the container.
    for (let i = 0; i < 50; i++) {
      const children = readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory());
      try {
        for (const c of children) rmdirSync(join(parent, c.name));
        rmdirSync(parent);
        break;
      } catch {
        await sleep(200);
      }
    }
  }
}

describe(`systemd unit docker/outbox-tail.service in ${IMAGE}`, () => {
  let stack: NetnsStack | undefined;
  let writer: OutboxWriter | undefined;
  let collector: KafkaCollector | undefined;
  let configDir: string | undefined;

  beforeAll(async () => {
    if (!isPrivatePodmanEngine()) {
      throw new Error(
        'the systemd test drives Podman (--systemd=always, --cgroups=enabled, podman cp): run it through bin/with-engine.sh, which starts the private engine',
      );
    }
    stack = await startNetnsStack();
    report(`postgres + kafka containers ready in ${stack.startedInMs} ms`);
  });

  afterAll(async () => {
    await writer?.close();
    await collector?.stop();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
    const left = await removeOwnContainers((l) => report(l));
    await removeCgroupParent();
    expect(left, 'containers left behind').toEqual([]);
  });

  it('starts, restarts after kill -9, stops cleanly with a drain, logs JSON to the journal, with every sandboxing directive in force', async () => {
    const s = stack!;
    const hostCgroupsBefore = hostCgroupTops();

    // The operator's files: settings without secrets, root-only credentials.
    configDir = mkdtempSync(join(tmpdir(), 'outbox-tail-systemd-'));
    const etc = join(configDir, 'outbox-tail');
    mkdirSync(join(etc, 'credentials'), { recursive: true });
    writeFileSync(
      join(etc, 'outbox-tail.env'),
      [
        '# written by test/containers/systemd-unit.test.ts',
        `OUTBOX_TAIL_SLOT=${SLOT}`,
        `OUTBOX_TAIL_BROKERS=${s.inside.brokers.join(',')}`,
        'OUTBOX_TAIL_LOG_LEVEL=info',
        '',
      ].join('\n'),
    );
    writeFileSync(join(etc, 'credentials', 'database-url'), s.inside.databaseUrl);
    // The unit lists it; this Kafka has no SASL, and the relay ignores a password without a mechanism.
    writeFileSync(join(etc, 'credentials', 'sasl-password'), 'no-sasl-on-this-broker');
    chmodSync(join(etc, 'credentials', 'database-url'), 0o600);
    chmodSync(join(etc, 'credentials', 'sasl-password'), 0o600);
    chmodSync(join(etc, 'credentials'), 0o700);

    const tCreate = Date.now();
    await podmanOk([
      'create',
      '--name',
      NAME,
      ...Object.entries(s.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
      '--network',
      s.networkMode,
      '--systemd=always',
      '--cgroups=enabled',
      `--cgroup-parent=${CGROUP_PARENT}`,
      '--cgroupns=private',
      '--cap-add',
      'SYS_ADMIN',
      IMAGE,
    ]);
    await podmanOk(['cp', UNIT_FILE, `${NAME}:/etc/systemd/system/outbox-tail.service`]);
    await podmanOk(['cp', `${etc}/.`, `${NAME}:/etc/outbox-tail/`]);
    await podmanOk(['start', NAME]);
    const state = await waitFor('systemctl is-system-running', 60_000, async () => {
      const r = await podman(['exec', NAME, 'systemctl', 'is-system-running']);
      const v = r.stdout.trim();
      return v === 'running' || v === 'degraded' ? v : undefined;
    });
    const bootMs = Date.now() - tCreate;
    if (state !== 'running')
      throw new Error(`systemd is ${state}: ${await sh('systemctl --failed --no-pager; journalctl -b -p warning -o cat --no-pager | tail -n 30')}`);
    report(`systemd booted (is-system-running: running) ${bootMs} ms after podman create`);
    const modes = await sh('stat -c "%a %U %n" /etc/outbox-tail/credentials /etc/outbox-tail/credentials/* /etc/outbox-tail/outbox-tail.env');
    expect(modes).toMatch(/^700 root \/etc\/outbox-tail\/credentials$/m);
    expect(modes).toMatch(/^600 root \/etc\/outbox-tail\/credentials\/database-url$/m);

    // Table, publication and slot: the package's init, as root, once.
    await sh(
      'set -a; . /etc/outbox-tail/outbox-tail.env; OUTBOX_TAIL_DATABASE_URL_FILE=/etc/outbox-tail/credentials/database-url node /opt/outbox-tail/bin/outbox-tail.js init',
    );
    writer = await new OutboxWriter(s.host.databaseUrl, AGGREGATE).connect();
    collector = await new KafkaCollector(s.host.brokers).start([TOPIC]);

    // Start.
    const tStart = Date.now();
    await sh('systemctl daemon-reload && systemctl enable --now outbox-tail');
    await waitFor('the relay streaming', 60_000, async () => (await countEvent('streaming')) >= 1);
    report(`systemctl enable --now: streaming after ${Date.now() - tStart} ms`);
    const tRows = Date.now();
    await writer.write(100, 10);
    await collector.waitForDistinct(100, 60_000);
    report(`100 rows reached Kafka in ${Date.now() - tRows} ms`);

    // The sandbox, on the running process.
    const first = await unitProps('MainPID', 'NRestarts', 'ActiveState', 'SubState');
    expect(first.ActiveState).toBe('active');
    const pid = first.MainPID!;
    const status = await sh(`cat /proc/${pid}/status`);
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim();
    const uid = Number(field('Uid')!.split(/\s+/)[0]);
    expect(uid, 'DynamicUser: a uid from 61184-65519').toBeGreaterThanOrEqual(61184);
    expect(uid).toBeLessThanOrEqual(65519);
    expect(field('CapEff'), 'CapabilityBoundingSet= (empty)').toBe('0000000000000000');
    expect(field('CapBnd')).toBe('0000000000000000');
    expect(field('NoNewPrivs')).toBe('1');
    expect(field('Seccomp'), 'SystemCallFilter: seccomp filter mode').toBe('2');
    const mounts = await sh(`cat /proc/${pid}/mountinfo`);
    const mountOf = (target: string) => mounts.split('\n').find((l) => l.split(' ')[4] === target);
    expect(mountOf('/')?.split(' ')[5], 'ProtectSystem=strict: / read-only').toMatch(/(^|,)ro(,|$)/);
    expect(mountOf('/tmp'), 'PrivateTmp=yes: a /tmp of its own').toBeDefined();
    expect(mountOf('/proc'), 'ProtectProc=invisible').toMatch(/hidepid=(invisible|2)/);
    expect(mountOf('/dev'), 'PrivateDevices=yes: a /dev of its own').toBeDefined();
    // LoadCredential=: the files systemd mounted for the unit: root's, read-only, nothing for
    // "other" (the dynamic user reads them through an ACL: the relay started with its URL).
    const creds = await sh('stat -c "%a %U %n" /run/credentials/outbox-tail.service /run/credentials/outbox-tail.service/*');
    expect(creds).toMatch(/^5[0-7]0 root \/run\/credentials\/outbox-tail\.service$/m);
    expect(creds).toMatch(/^4[0-7]0 root \/run\/credentials\/outbox-tail\.service\/database-url$/m);
    expect(creds).toMatch(/^4[0-7]0 root \/run\/credentials\/outbox-tail\.service\/sasl-password$/m);
    const exposure = /Overall exposure level for outbox-tail\.service:\s*([\d.]+)/.exec(
      await sh('systemd-analyze security outbox-tail --no-pager 2>&1 | tail -n 3'),
    )?.[1];
    // systemd's own lines about the unit (not the relay's JSON) that say a directive was not applied.
    const refused = (
      await sh(
        'journalctl -b --no-pager -o cat | grep -v "^{" | grep "outbox-tail" | grep -i -E "not supported|ignoring|prohibited|refus|failed to set up" || true',
      )
    ).trim();
    report(
      `sandbox: uid ${uid}, CapEff 0, NoNewPrivs 1, seccomp 2, / ro, private /tmp and /dev, hidepid; exposure ${exposure}; refused/ignored directives: ${refused || 'none'}`,
    );
    expect(refused, 'systemd refused or ignored a directive of the unit').toBe('');

    // The host's cgroup trees: systemd wrote only below the container's own cgroup.
    expect(hostCgroupTops().filter((d) => !d.endsWith(CGROUP_PARENT.slice(1)))).toEqual(hostCgroupsBefore.filter((d) => !d.endsWith(CGROUP_PARENT.slice(1))));

    // kill -9 of the main process: Restart=always, RestartSec=5.
    writer.startBackground(5, 20);
    await sh(`kill -9 ${pid}`);
    const back = await waitFor('a restarted relay', 60_000, async () => {
      const p = await unitProps('MainPID', 'NRestarts', 'SubState', 'InactiveEnterTimestampMonotonic', 'ExecMainStartTimestampMonotonic');
      return p.SubState === 'running' && p.MainPID !== pid && p.MainPID !== '0' && Number(p.NRestarts) > Number(first.NRestarts) ? p : undefined;
    });
    const restartDelayMs = (Number(back.ExecMainStartTimestampMonotonic) - Number(back.InactiveEnterTimestampMonotonic)) / 1000;
    await waitFor('the restarted relay streaming', 60_000, async () => (await countEvent('streaming')) >= 2);
    await writer.stopBackground();
    await collector.waitForDistinct(writer.rows.length, 60_000);
    report(
      `kill -9 ${pid}: restarted as ${back.MainPID} after ${restartDelayMs.toFixed(0)} ms (NRestarts ${first.NRestarts} -> ${back.NRestarts}); all ${writer.rows.length} rows in Kafka`,
    );
    expect(restartDelayMs).toBeGreaterThanOrEqual(5_000);
    expect(restartDelayMs).toBeLessThan(15_000);

    // systemctl stop while rows are being written: drain, exit 0, no restart.
    writer.startBackground(20, 5);
    await collector.waitForDistinct(writer.rows.length + 200, 60_000).catch(() => undefined);
    const tStop = Date.now();
    await sh('systemctl stop outbox-tail', 60_000);
    const stopMs = Date.now() - tStop;
    await writer.stopBackground();
    const stopped = await unitProps('ActiveState', 'Result', 'ExecMainCode', 'ExecMainStatus', 'NRestarts');
    report(`systemctl stop: ${stopMs} ms, ${JSON.stringify(stopped)}`);
    expect(stopped.ActiveState).toBe('inactive');
    expect(stopped.Result).toBe('success');
    expect(stopped.ExecMainCode, 'CLD_EXITED').toBe('1');
    expect(stopped.ExecMainStatus).toBe('0');
    await sleep(6_000); // RestartSec=5: a restart would have begun by now
    expect((await unitProps('ActiveState', 'NRestarts')).NRestarts).toBe(stopped.NRestarts);

    // The journal holds the relay's JSON lines.
    const j = await journal();
    const events = j.json.map((l) => l.event);
    report(`journalctl -u outbox-tail -o cat: ${j.json.length} JSON lines, events ${[...new Set(events)].join(',')}`);
    expect(j.json.every((l) => l.service === 'outbox-tail' && typeof l.level === 'string' && typeof l.time === 'string')).toBe(true);
    expect(events.filter((e) => e === 'start').length).toBe(2);
    for (const e of ['preflight-ok', 'streaming', 'shutdown', 'drained', 'stopped']) expect(events).toContain(e);
    expect(events).not.toContain('shutdown-timeout');
    expect(j.text).not.toMatch(/postgres:postgres@/); // the URL is logged redacted

    // What the slot confirmed is in Kafka; a start delivers the rest.
    await sleep(1000);
    const confirmed = await confirmedFlushLsn(s.host.databaseUrl, SLOT);
    const seen = collector.distinctIds();
    const missing = writer.rows.filter((r) => r.lsnAfterCommit <= confirmed! && !seen.has(r.id));
    report(
      `confirmed_flush_lsn ${Lsn.format(confirmed!)}: ${missing.length} confirmed rows missing; ${seen.size} of ${writer.rows.length} rows in Kafka after the stop`,
    );
    expect(missing.map((r) => r.id)).toEqual([]);
    await sh('systemctl start outbox-tail');
    await collector.waitForDistinct(writer.rows.length, 60_000);
    const written = writer.ids();
    expect(seen.size).toBe(written.size);
    expect([...seen].filter((x) => !written.has(x))).toEqual([]);
    await sh('systemctl stop outbox-tail', 60_000);
    expect((await unitProps('Result', 'ExecMainStatus')).ExecMainStatus).toBe('0');
    report(`nothing lost: ${seen.size} distinct ids in Kafka = ${written.size} rows written (${collector.records.length} records)`);
  });
});
