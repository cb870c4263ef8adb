/**
 * The packaging files in docker/, tested as far as this machine allows without
 * a container engine: the systemd unit through `systemd-analyze verify` (on a
 * copy whose ExecStart points at a temp script, since verify requires the
 * binary to exist), the compose file's and Dockerfile's references to paths
 * that must exist, and the example config files through the real schema.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/temp-dir.js';
import { parse as parseYaml } from 'yaml';
import { envName, optionKeys } from '../../../src/config/options.js';
import { resolveConfig } from '../../../src/config/resolve-config.js';
import { SHIPPED_NODE_OPTIONS } from '../../../dev/bench/shipped-node-options.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOCKER = join(ROOT, 'docker');
const read = (p: string) => readFileSync(join(DOCKER, p), 'utf8');
const KNOWN_ENV = new Set([...optionKeys.map(envName), 'OUTBOX_TAIL_CONFIG', 'DATABASE_URL']);

function verifyUnit(unitText: string): { status: number | null; output: string } {
  const dir = tempDir('outbox-tail-unit-');
  const fakeNode = join(dir, 'node');
  writeFileSync(fakeNode, '#!/bin/sh\nexit 0\n');
  chmodSync(fakeNode, 0o755);
  const unit = join(dir, 'outbox-tail.service');
  writeFileSync(unit, unitText.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${fakeNode} `));
  const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  if (r.error) throw new Error(`systemd-analyze not runnable (install Debian's systemd package): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe('systemd unit docker/outbox-tail.service', () => {
  const unit = read('outbox-tail.service');
  const directive = (name: string) => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((m) => m[1]!.trim());

  it('passes systemd-analyze verify with no warning (ExecStart rewritten to a temp script)', () => {
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/outbox-tail\/bin\/outbox-tail\.js run$/m);
    expect(verifyUnit(unit)).toEqual({ status: 0, output: '' });
  });

  it('the verification catches a broken unit (negative control)', () => {
    const broken = verifyUnit(unit.replace('Restart=always', 'Restart=sometimes').replace('ProtectSystem=strict', 'ProtectSystem=stricter'));
    expect(broken.output).toMatch(/restart specifier|ProtectSystem/i);
  });

  it('runs node with the NODE_OPTIONS the benchmark measures (dev/bench/shipped-node-options.ts)', () => {
    expect(directive('Environment')).toContain(`NODE_OPTIONS=${SHIPPED_NODE_OPTIONS}`);
  });

  it('restarts always, reads an EnvironmentFile, is hardened and stops after the drain timeout', () => {
    expect(directive('Restart')).toEqual(['always']);
    expect(directive('EnvironmentFile')).toEqual(['/etc/outbox-tail/outbox-tail.env']);
    expect(directive('NoNewPrivileges')).toEqual(['yes']);
    expect(directive('ProtectSystem')).toEqual(['strict']);
    expect(directive('DynamicUser')).toEqual(['yes']);
    expect(directive('KillSignal')).toEqual(['SIGTERM']);
    const defaults = resolveConfig({});
    // longer than the graceful drain (shutdownTimeoutMs), so SIGKILL never cuts a clean stop short
    expect(Number(directive('TimeoutStopSec')[0])).toBeGreaterThan(defaults.shutdownTimeoutMs / 1000);
    // secrets come as credentials, through the *_FILE options
    expect(directive('Environment')).toEqual(
      expect.arrayContaining(['OUTBOX_TAIL_DATABASE_URL_FILE=%d/database-url', 'OUTBOX_TAIL_SASL_PASSWORD_FILE=%d/sasl-password']),
    );
    for (const env of directive('Environment'))
      expect(KNOWN_ENV.has(env.split('=')[0]!) || env.startsWith('NODE_ENV=') || env.startsWith('NODE_OPTIONS=')).toBe(true);
  });

  it('has a low exposure score in systemd-analyze security', () => {
    const dir = tempDir('outbox-tail-unit-sec-');
    const path = join(dir, 'outbox-tail.service');
    writeFileSync(path, unit);
    const out = execFileSync('systemd-analyze', ['security', '--offline=yes', path], { encoding: 'utf8' });
    const score = Number(/Overall exposure level for outbox-tail\.service: ([\d.]+)/.exec(out)?.[1]);
    expect(score).toBeLessThanOrEqual(2.5);
  });
});

describe('docker/docker-compose.yml', () => {
  const compose = parseYaml(read('docker-compose.yml')) as {
    services: Record<
      string,
      {
        image?: string;
        build?: { context: string; dockerfile: string };
        command?: string[];
        environment?: Record<string, string>;
        volumes?: string[];
        secrets?: string[];
        depends_on?: Record<string, unknown>;
      }
    >;
    secrets: Record<string, { file: string }>;
  };
  const services = compose.services;

  it('runs Postgres with wal_level=logical, Kafka in KRaft mode, init, the relay and the demo writer', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'kafka', 'init', 'roles', 'relay', 'writer', 'tail']));
    expect(services.postgres!.command!.join(' ')).toContain('wal_level=logical');
    expect(services.kafka!.environment!.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(services.relay!.command).toEqual(['run']);
    expect(services.init!.command).toEqual(['init']);
    for (const [name, s] of Object.entries(services)) {
      if (s.image) expect(s.image, name).not.toMatch(/:latest$|^[^:]+$/);
      for (const dep of Object.keys(s.depends_on ?? {})) expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
    }
  });

  it('refers only to paths that exist', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build) {
        const context = resolve(DOCKER, s.build.context);
        expect(existsSync(join(context, 'package.json')), `${name} build context`).toBe(true);
        expect(existsSync(join(context, s.build.dockerfile)), `${name} dockerfile`).toBe(true);
      }
      for (const volume of s.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.') || source.startsWith('/')) expect(existsSync(resolve(DOCKER, source)), `${name} volume ${source}`).toBe(true);
      }
      for (const secret of s.secrets ?? []) expect(compose.secrets[secret], `${name} secret ${secret}`).toBeDefined();
    }
    for (const [name, secret] of Object.entries(compose.secrets)) expect(existsSync(resolve(DOCKER, secret.file)), `secret ${name}`).toBe(true);
  });

  it('configures the relay only with options that exist, metrics published on host loopback only', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const key of Object.keys(s.environment ?? {})) {
        if (key.startsWith('OUTBOX_TAIL_')) expect(KNOWN_ENV.has(key), `${name}: ${key}`).toBe(true);
      }
    }
    const relay = services.relay as { ports?: string[]; environment: Record<string, string> };
    expect(relay.ports).toEqual(['127.0.0.1:9464:9464']);
    // the relay's own config, with the secret file swapped for a readable temp file, passes the schema
    const dir = tempDir('outbox-tail-compose-');
    const urlFile = join(dir, 'url');
    writeFileSync(urlFile, 'postgres://outbox_tail:x@postgres:5432/app');
    const config = resolveConfig({ env: { ...relay.environment, OUTBOX_TAIL_DATABASE_URL_FILE: urlFile } });
    expect(config).toMatchObject({ slot: 'demo_outbox', brokers: ['kafka:9092'], metricsListen: '0.0.0.0:9464' });
  });
});

describe('docker/Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  it('is multi-stage, installs production dependencies only in the runtime image, runs as non-root with a healthcheck', () => {
    const froms = instructions.filter((l) => /^FROM /i.test(l));
    expect(froms.length).toBeGreaterThanOrEqual(3);
    const finalStage = instructions.slice(instructions.lastIndexOf(froms.at(-1)!));
    expect(instructions.some((l) => /npm ci --omit=dev/.test(l))).toBe(true);
    expect(finalStage.some((l) => /COPY --from=deps \/app\/node_modules/.test(l))).toBe(true);
    expect(finalStage.some((l) => /^RUN .*npm (ci|install)/.test(l))).toBe(false);
    const user = finalStage.filter((l) => /^USER /.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)\b/);
    expect(finalStage.some((l) => /^HEALTHCHECK .*healthcheck\.mjs/.test(l))).toBe(true);
  });

  it('runs node with the NODE_OPTIONS the benchmark measures (dev/bench/shipped-node-options.ts)', () => {
    const env = instructions.filter((l) => /^ENV /.test(l)).join(' ');
    expect(env).toMatch(/NODE_OPTIONS=(\S+)/);
    expect(/NODE_OPTIONS=(\S+)/.exec(env)![1]).toBe(SHIPPED_NODE_OPTIONS);
  });

  it('starts node in exec form under tini, so signals reach it', () => {
    const entrypoint = JSON.parse(instructions.find((l) => l.startsWith('ENTRYPOINT '))!.slice('ENTRYPOINT '.length)) as string[];
    expect(entrypoint.slice(0, 3)).toEqual(['/usr/bin/tini', '--', 'node']);
    expect(instructions.some((l) => /apt-get install .*tini/.test(l))).toBe(true);
    expect(instructions).toContain('STOPSIGNAL SIGTERM');
  });

  it('copies only paths that exist and that the dockerignore lets through', () => {
    const ignore = read('Dockerfile.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('**');
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1));
    const letThrough = (path: string) =>
      allowed.some(
        (pattern) =>
          pattern === path || (pattern.endsWith('/**') && path === pattern.slice(0, -3)) || (pattern.endsWith('/*.sql') && path === pattern.slice(0, -6)),
      );
    const copies = instructions.filter((l) => /^COPY /.test(l) && !/--from=/.test(l));
    expect(copies.length).toBeGreaterThan(3);
    for (const copy of copies) {
      const parts = copy.split(/\s+/).slice(1);
      for (const source of parts.slice(0, -1)) {
        expect(existsSync(join(ROOT, source)), `COPY source ${source}`).toBe(true);
        expect(letThrough(source.replace(/\/$/, '')), `dockerignore lets ${source} through`).toBe(true);
      }
    }
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect(build.include).toEqual(['src']);
  });
});

describe('example configuration', () => {
  /** Points /etc/outbox-tail/... at a temp dir holding every referenced file. */
  function materialise(text: string): { text: string; dir: string } {
    const dir = tempDir('outbox-tail-example-');
    const paths = new Set(text.match(/\/etc\/outbox-tail\/[\w./-]+/g) ?? []);
    for (const p of paths) {
      const target = join(dir, p);
      mkdirSync(join(target, '..'), { recursive: true });
      writeFileSync(
        target,
        p.includes('database-url') ? 'postgres://outbox_tail:pw@db.internal:5432/app\n' : p.includes('sasl-password') ? 'kafka-password\n' : 'PEM\n',
      );
    }
    return { text: text.replaceAll('/etc/outbox-tail/', `${dir}/etc/outbox-tail/`), dir };
  }

  it('docker/outbox-tail.example.yaml passes the schema', () => {
    const { text, dir } = materialise(read('outbox-tail.example.yaml'));
    const path = join(dir, 'outbox-tail.yaml');
    writeFileSync(path, text);
    const c = resolveConfig({ configFile: path });
    expect(c).toMatchObject({
      slot: 'orders_outbox',
      pgSslmode: 'verify-full',
      kafkaSsl: true,
      saslMechanism: 'scram-sha-512',
      saslPassword: 'kafka-password',
      databaseUrl: 'postgres://outbox_tail:pw@db.internal:5432/app',
      metricsListen: '127.0.0.1:9464',
      topic: 'outbox.event.{aggregate_type}',
    });
    expect(c.brokers).toHaveLength(3);
  });

  it('docker/example.env passes the schema together with the unit file credentials', () => {
    const { text, dir } = materialise(read('example.env'));
    const env: Record<string, string> = {};
    for (const line of text.split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
      if (m) env[m[1]!] = m[2]!;
    }
    for (const key of Object.keys(env)) expect(KNOWN_ENV.has(key), key).toBe(true);
    // what systemd adds: the credentials as *_FILE
    env.OUTBOX_TAIL_DATABASE_URL_FILE = join(dir, 'db');
    env.OUTBOX_TAIL_SASL_PASSWORD_FILE = join(dir, 'pw');
    writeFileSync(env.OUTBOX_TAIL_DATABASE_URL_FILE, 'postgres://outbox_tail:pw@db/app');
    writeFileSync(env.OUTBOX_TAIL_SASL_PASSWORD_FILE, 'pw');
    expect(resolveConfig({ env })).toMatchObject({ slot: 'orders_outbox', saslMechanism: 'scram-sha-512', kafkaSsl: true });
  });
});

describe('the published package', () => {
  // npm pack --dry-run lists what `files` lets in, without writing a tarball.
  const packed = (): string[] => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  };

  it('holds only the daemon, its library API and the migrations: no test stack, demo or dev script', () => {
    const files = packed();
    expect(files).toContain('bin/outbox-tail.js');
    expect(files).toContain('migrations/0001_outbox.sql');
    expect(files).toContain('CHANGELOG.md');
    const outside = files.filter(
      (f) => !/^(dist\/src\/.+|migrations\/\d{4}_[a-z_]+\.sql|bin\/outbox-tail\.js|README\.md|CHANGELOG\.md|package\.json|LICENSE)$/.test(f),
    );
    expect(outside).toEqual([]);
    expect(files.filter((f) => /(^|\/)(stack|demo|test|dev)\//.test(f) || f.endsWith('.sh'))).toEqual([]);
  });
});
