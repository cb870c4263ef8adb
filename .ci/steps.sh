# shellcheck shell=bash
# The timing rules of a CI run, sourced by .ci/run (and by test/unit/tooling/ci-budget.test.ts, which proves them):
#   - a step that fails fails the run;
#   - a step still running at twice its limit is stopped and fails the run (a hang is found before the hard limit);
#   - a step past its limit, and a run past its budget, are reported loudly and do NOT fail the run: the budget is a
#     target to keep room to grow, and a correct submission on a slower or colder machine must still land;
#   - a run whose total passes the safety line (75 minutes, well below the 90-minute hard limit past which nothing
#     lands) fails, so that it is found while it still lands somewhere.
# The caller sets CI_RUN_MODE (run: run the steps; anything else: only describe them) and may override the three figures.
: "${BUDGET_S:=1800}"
: "${SAFETY_S:=4500}"
: "${HARD_LIMIT_S:=5400}"
: "${CI_RUN_MODE:=run}"

t_run=$EPOCHREALTIME
timings=()
slow_steps=()
secs_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }

# step NAME LIMIT_S COMMAND...: runs it and times it; fails when it fails or hangs (twice LIMIT_S), warns past LIMIT_S.
step() {
  local name=$1 limit=$2
  shift 2
  [[ $CI_RUN_MODE == run ]] || return 0
  local start=$EPOCHREALTIME rc=0 secs note=''
  printf '\n==> %s (limit %ss)\n' "$name" "$limit"
  if declare -F "$1" >/dev/null; then
    # A function of this script (timeout runs programs only): in a bash that has its definition.
    timeout -k 30 "$((limit * 2))" bash -c "$(declare -f "$1"); \"\$@\"" bash "$@" || rc=$?
  else
    timeout -k 30 "$((limit * 2))" "$@" || rc=$?
  fi
  secs=$(secs_since "$start")
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    note="  FAILED: stopped at twice its limit (${limit}s), a hang or a far too slow machine"
  elif [[ $rc -ne 0 ]]; then
    note="  FAILED (exit $rc)"
  elif ((secs > limit)); then
    note="  SLOW: over its limit of ${limit}s (a warning; the run goes on): find what slowed it down"
    slow_steps+=("$name")
  fi
  timings+=("$(printf '%-62s %6ss %6ss%s' "$name" "$secs" "$limit" "$note")")
  printf '<== %s: exit %s after %ss (limit %ss)%s\n' "$name" "$rc" "$secs" "$limit" "$note"
  return "$rc"
}

# Work no step waits on yet runs beside the steps, at nice 10 (a step's process gets about nine tenths of a core they
# contend for), each job in a process group of its own; a step waits for it (await_background) before what needs it.
# Its time is reported with the steps. Not the idle scheduling class: there a build starves while two cores are busy.
declare -A bg_pid=() bg_status=() bg_log=()
bg_names=()
# background NAME COMMAND...: starts it.
background() {
  local name=$1
  shift
  [[ $CI_RUN_MODE == run ]] || return 0
  bg_status[$name]=$(mktemp "${TMPDIR:-/tmp}/outbox-tail-ci-bg.XXXXXX")
  bg_log[$name]="${bg_status[$name]}.log"
  # setsid: its own process group, so the whole job (go and its compilers, podman and its builds) can be stopped at once.
  setsid bash -c '
    status=$1 log=$2; shift 2
    start=$EPOCHREALTIME rc=0
    nice -n 10 "$@" >"$log" 2>&1 || rc=$?
    awk -v a="$start" -v b="$EPOCHREALTIME" -v rc="$rc" '"'"'BEGIN { printf "exit %s after %.0fs in the background\n", rc, b - a }'"'"' >"$status"
  ' bash "${bg_status[$name]}" "${bg_log[$name]}" "$@" </dev/null >/dev/null 2>&1 &
  bg_pid[$name]=$!
  bg_names+=("$name")
  echo "background: $name started"
}
# await_background PID STATUS LOG: waits for a background job (run as a step: the step's time is the wait); fails,
# with its log, when the job failed. The status file is the job's last write: once it is there the job is done.
await_background() {
  local pid=$1 status=$2 log=$3
  while [[ ! -s "$status" ]] && kill -0 "$pid" 2>/dev/null; do sleep 1; done
  echo "background: $(cat "$status" 2>/dev/null || echo 'ended without a status')"
  grep -q '^exit 0 ' "$status" 2>/dev/null && return 0
  tail -n 40 "$log" 2>/dev/null
  return 1
}
background_report() {
  ((${#bg_names[@]} > 0)) || return 0
  printf '\n==> background\n'
  local name
  for name in "${bg_names[@]}"; do
    if [[ ! -s "${bg_status[$name]}" ]] && kill -0 "${bg_pid[$name]}" 2>/dev/null; then
      # Nothing of ours outlives the run.
      kill -TERM -- "-${bg_pid[$name]}" 2>/dev/null || true
      # Its EXIT traps (an engine to stop) run before the run ends.
      for _ in $(seq 60); do kill -0 -- "-${bg_pid[$name]}" 2>/dev/null || break; sleep 0.5; done
      printf '  %-52s still running at the end of the run: stopped\n' "$name"
    else
      printf '  %-52s %s\n' "$name" "$(cat "${bg_status[$name]}" 2>/dev/null || echo 'no status')"
    fi
    if ! grep -q '^exit 0 ' "${bg_status[$name]}" 2>/dev/null; then
      printf '    its log (last 30 lines):\n'
      # || true: a job stopped before its shell opened the log has none (set -e and pipefail would end the report).
      tail -n 30 "${bg_log[$name]}" 2>/dev/null | sed 's/^/      /' || true
    fi
    rm -f "${bg_status[$name]}" "${bg_log[$name]}"
  done
}

# The EXIT trap: the step table, the total against the budget, the safety line and the hard limit; the exit code.
# A caller may define summary_extra to print its own sections first.
summary() {
  local rc=$?
  [[ $CI_RUN_MODE == run ]] || return 0
  local total
  total=$(secs_since "$t_run")
  declare -F summary_extra >/dev/null && summary_extra
  background_report
  printf '\n==> timings\n'
  printf '  %-62s %7s %7s\n' step took limit
  printf '  %s\n' "${timings[@]}"
  printf '  %-62s %6ss of the %ss budget (%s min); fails past %ss (%s min); hard limit %ss\n' total "$total" "$BUDGET_S" "$((BUDGET_S / 60))" "$SAFETY_S" "$((SAFETY_S / 60))" "$HARD_LIMIT_S"
  if ((${#slow_steps[@]} > 0)); then
    printf '  !! %s step(s) over their limit (warnings, not failures): %s\n' "${#slow_steps[@]}" "$(IFS=';'; echo "${slow_steps[*]}")"
  fi
  if ((total > SAFETY_S)); then
    printf '  !! FAILED: the run took %ss, past the %ss safety line (the hard limit is %ss): make a step faster now\n' "$total" "$SAFETY_S" "$HARD_LIMIT_S"
    [[ $rc -ne 0 ]] || rc=3
  elif ((total > BUDGET_S)); then
    printf '  !! OVER BUDGET by %ss: %ss of %ss (a warning, the run still passes; it fails only past %ss): make a step faster before adding one\n' "$((total - BUDGET_S))" "$total" "$BUDGET_S" "$SAFETY_S"
  fi
  if [[ $rc -eq 0 ]]; then echo "==> OK"; else echo "==> FAILED (exit $rc)"; fi
  exit "$rc"
}
