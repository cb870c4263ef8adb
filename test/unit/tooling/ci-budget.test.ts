import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * A CI run made of the given steps, through the timing rules .ci/run uses (.ci/steps.sh), with tiny budgets so
 * that a sleep of a second or two crosses them. Only lower bounds of time matter here (a sleep never ends early),
 * so a slow machine cannot change an outcome.
 */
function ciRun(figures: { budget: number; safety: number }, steps: string): { code: number | null; output: string } {
  const script = `CI_RUN_MODE=run BUDGET_S=${figures.budget} SAFETY_S=${figures.safety}; source .ci/steps.sh; trap summary EXIT; ${steps}`;
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the CI timing rules (.ci/steps.sh)', () => {
  it('passes a green run that is over its budget and a step over its limit, and prints both overruns', () => {
    const r = ciRun({ budget: 1, safety: 600 }, 'step "slow step" 2 sleep 3; step "quick step" 60 true');
    expect(r.output).toMatch(/slow step .*SLOW: over its limit of 2s/);
    expect(r.output).toMatch(/OVER BUDGET by \d+s/);
    expect(r.output).toContain('==> OK');
    expect(r.code, r.output).toBe(0);
  });

  it('fails a run whose test fails, and names the step', () => {
    const r = ciRun({ budget: 600, safety: 600 }, 'step "failing tests" 60 bash -c "exit 1"; step "never reached" 60 true');
    expect(r.output).toMatch(/failing tests .*FAILED \(exit 1\)/);
    expect(r.output).not.toContain('never reached');
    expect(r.code, r.output).not.toBe(0);
  });

  it('stops a step still running at twice its limit and fails the run', () => {
    const r = ciRun({ budget: 600, safety: 600 }, 'step "hanging step" 1 sleep 60');
    expect(r.output).toMatch(/hanging step .*FAILED: stopped at twice its limit/);
    expect(r.code, r.output).not.toBe(0);
  });

  it('fails a green run past the safety line', () => {
    const r = ciRun({ budget: 1, safety: 1 }, 'step "long step" 60 sleep 2');
    expect(r.output).toMatch(/FAILED: the run took \d+s, past the 1s safety line/);
    expect(r.code, r.output).toBe(3);
  });

  it('waits for a background job as a step, and reports its time', () => {
    const r = ciRun(
      { budget: 600, safety: 600 },
      'background job sleep 1; step "wait for job" 30 await_background "${bg_pid[job]}" "${bg_status[job]}" "${bg_log[job]}"',
    );
    expect(r.output).toMatch(/wait for job: exit 0/);
    expect(r.output).toMatch(/job +exit 0 after \d+s in the background/);
    expect(r.code, r.output).toBe(0);
  });

  it('fails the step that waits for a failed background job, and prints its log', () => {
    const r = ciRun(
      { budget: 600, safety: 600 },
      'background job bash -c "echo the-job-said-this; exit 7"; step "wait for job" 30 await_background "${bg_pid[job]}" "${bg_status[job]}" "${bg_log[job]}"',
    );
    expect(r.output).toMatch(/wait for job .*FAILED \(exit 1\)/);
    expect(r.output).toContain('the-job-said-this');
    expect(r.code, r.output).not.toBe(0);
  });

  it('stops a background job still running when the run ends', () => {
    const marker = `ci-budget-leftover-${process.pid}-${Date.now()}`;
    const r = ciRun({ budget: 600, safety: 600 }, `background job bash -c "exec -a ${marker} sleep 120"; step "quick step" 30 true`);
    expect(r.output).toMatch(/job +still running at the end of the run: stopped/);
    expect(r.code, r.output).toBe(0);
    const left = spawnSync('pgrep', ['-f', marker], { encoding: 'utf8' });
    expect(left.stdout.trim(), 'the background job outlived the run').toBe('');
  });

  it('passes a run whose background job was stopped before it wrote its log (a loaded machine: stopped at once)', () => {
    // The log is removed to make the race certain: the job's shell had not opened it yet when the run ended.
    const r = ciRun({ budget: 600, safety: 600 }, 'background job sleep 120; step "quick step" 30 bash -c "sleep 0.5; rm -f ${bg_log[job]}"');
    expect(r.output).toMatch(/job +still running at the end of the run: stopped/);
    expect(r.code, r.output).toBe(0);
  });
});
