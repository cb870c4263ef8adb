# shellcheck shell=bash
# The timing rules of a CI run, sourced by .ci/run (and by test/unit/ci-budget.test.ts, which proves them):
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

# The EXIT trap: the step table, the total against the budget, the safety line and the hard limit; the exit code.
# A caller may define summary_extra to print its own sections first.
summary() {
  local rc=$?
  [[ $CI_RUN_MODE == run ]] || return 0
  local total
  total=$(secs_since "$t_run")
  declare -F summary_extra >/dev/null && summary_extra
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
