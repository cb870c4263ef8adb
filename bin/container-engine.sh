#!/usr/bin/env bash
# A private Podman engine for Testcontainers on machines without a Docker
# engine (our CI machines: no systemd, cgroup v1 "hybrid", no registry).
#
#   bin/container-engine.sh start   start the API service (idempotent), print the env to use
#   bin/container-engine.sh env     print the env (export lines) without starting anything
#   bin/container-engine.sh stop    remove every container of this engine, stop the service,
#                                   leave no conmon/podman process behind
#   bin/container-engine.sh status  exit 0 when the service answers
#   bin/container-engine.sh podman ARGS...   podman --remote against the private socket
#
# Everything lives under $OUTBOX_TAIL_CACHE_DIR/containers (default
# ~/.cache/outbox-tail/containers): configuration, image storage, runtime state
# and the socket. Nothing listens on /var/run/docker.sock or /run/podman, and
# the host's network settings are never changed (slirp4netns, no CNI bridge).
# Why each setting is there: docs/containers.md.
set -euo pipefail

CACHE_ROOT="${OUTBOX_TAIL_CACHE_DIR:-$HOME/.cache/outbox-tail}"
ENGINE_DIR="$CACHE_ROOT/containers"
SOCK="$ENGINE_DIR/podman.sock"
PIDFILE="$ENGINE_DIR/service.pid"
LOG="$ENGINE_DIR/service.log"

log() { printf '[engine] %s\n' "$*" >&2; }
die() { printf '[engine] ERROR: %s\n' "$*" >&2; exit 1; }

write_config() {
  mkdir -p "$ENGINE_DIR/storage" "$ENGINE_DIR/run" "$ENGINE_DIR/tmp" "$ENGINE_DIR/empty-cni" "$ENGINE_DIR/netconf"
  # containers.conf: see docs/containers.md for the failure each line fixed.
  cat >"$ENGINE_DIR/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "slirp4netns"
cgroups = "disabled"
log_driver = "k8s-file"
init_path = "/usr/bin/catatonit"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
exit_command_delay = 5
tmp_dir = "$ENGINE_DIR/tmp"
network_cmd_options = ["allow_host_loopback=false"]

[network]
network_backend = "cni"
cni_plugin_dirs = ["$ENGINE_DIR/empty-cni"]
network_config_dir = "$ENGINE_DIR/netconf"
EOF
  cat >"$ENGINE_DIR/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$ENGINE_DIR/storage"
runroot = "$ENGINE_DIR/run"
EOF
  # No registry is reachable: never try one for a short name.
  cat >"$ENGINE_DIR/registries.conf" <<EOF
unqualified-search-registries = []
short-name-mode = "disabled"
EOF
}

print_env() {
  cat <<EOF
export CONTAINERS_CONF='$ENGINE_DIR/containers.conf'
export CONTAINERS_STORAGE_CONF='$ENGINE_DIR/storage.conf'
export CONTAINERS_REGISTRIES_CONF='$ENGINE_DIR/registries.conf'
export DOCKER_HOST='unix://$SOCK'
export TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
export TESTCONTAINERS_RYUK_DISABLED=true
export OUTBOX_TAIL_CONTAINER_ENGINE=podman
EOF
}

export_env() { eval "$(print_env)"; }

remote() { export_env; podman --remote --url "unix://$SOCK" "$@"; }

answers() { [[ -S "$SOCK" ]] && remote version >/dev/null 2>&1; }

start() {
  command -v podman >/dev/null 2>&1 || die "podman is not installed: run 'npm run setup' (as root; installs Debian's podman)"
  write_config
  export_env
  if answers; then
    log "already running on $SOCK"
    print_env
    return
  fi
  rm -f "$SOCK"
  stop_leftovers
  # crun refuses cgroup v1 with a hugetlb-only cgroup2 mounted beside it
  # ("cgroups in hybrid mode not supported"): hide that mount, in a private
  # mount namespace only, so the host keeps it.
  local unmount=''
  if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then unmount='umount /sys/fs/cgroup/unified 2>/dev/null || true;'; fi
  # Podman detects a reboot by its tmp_dir being empty and then resets every
  # container it knows to "not running". Our machines have no tmpfs anywhere, so
  # after a service killed with its containers (a session that ended abruptly)
  # the next service believed them running and failed every list with "joining
  # network namespace of container ...: unknown FS magic" (CI of stop 46). Fresh
  # tmpfs mounts in the service's own namespace make each service start a boot:
  # tmp_dir, the storage runroot, /dev/shm (Podman's container locks) and
  # /run/netns (so network namespaces are never files in the host's /run/netns).
  local fresh="mkdir -p /run/netns && mount -t tmpfs -o mode=0700 outbox-tail-tmp '$ENGINE_DIR/tmp' && mount -t tmpfs -o mode=0700 outbox-tail-run '$ENGINE_DIR/run' && mount -t tmpfs -o mode=0755 outbox-tail-netns /run/netns && mount -t tmpfs -o mode=1777 outbox-tail-shm /dev/shm &&"
  # setsid: the service outlives this script, and stop can signal its whole group.
  setsid unshare -m --propagation private sh -c "$unmount $fresh exec podman system service --time=0 'unix://$SOCK'" \
    </dev/null >>"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  local i
  for ((i = 0; i < 100; i++)); do
    answers && break
    kill -0 "$(cat "$PIDFILE")" 2>/dev/null || { tail -n 20 "$LOG" >&2; die "podman system service exited; log: $LOG"; }
    sleep 0.1
  done
  answers || { tail -n 20 "$LOG" >&2; die "podman system service did not answer on $SOCK within 10 s; log: $LOG"; }
  # Containers a previous service left in its database cannot be running (their
  # namespaces died with it): remove them so nothing stale is listed or reused.
  local stale
  stale=$(remote ps -aq 2>/dev/null || true)
  if [[ -n "$stale" ]]; then
    log "removing containers left by a previous service: $(echo $stale)"
    # shellcheck disable=SC2086
    remote rm -f -t 0 $stale >/dev/null 2>&1 || true
  fi
  log "started on $SOCK (pid $(cat "$PIDFILE"))"
  print_env
}

# The processes of this engine's containers: their root is an overlay whose
# upper layer lives in our storage. A container outlives a service killed
# without stop (its conmon is reparented to init), holding memory and ports.
container_processes() {
  local f want="upperdir=$ENGINE_DIR/storage/overlay/"
  for f in /proc/[0-9]*/mountinfo; do
    # field 5 is the mount point: the process's root is the container's overlay.
    if grep -F -- "$want" "$f" 2>/dev/null | grep -q '^[^ ]* [^ ]* [^ ]* [^ ]* / '; then
      f=${f#/proc/}
      echo "${f%/mountinfo}"
    fi
  done
}

# A service that died without stop (killed with its session) may have left its
# process group, conmon processes and containers behind.
stop_leftovers() {
  if [[ -f "$PIDFILE" ]]; then
    kill -KILL -- "-$(cat "$PIDFILE")" 2>/dev/null || true
    rm -f "$PIDFILE"
  fi
  local left
  left="$(pgrep -f "conmon.*$ENGINE_DIR" || true) $(container_processes)"
  # shellcheck disable=SC2086
  if [[ -n "${left// /}" ]]; then kill -KILL $left 2>/dev/null || true; fi
}

stop() {
  export_env
  if answers; then
    local ids
    ids=$(remote ps -aq 2>/dev/null || true)
    if [[ -n "$ids" ]]; then
      log "removing containers: $(echo $ids)"
      # shellcheck disable=SC2086
      remote rm -f -t 0 $ids >/dev/null 2>&1 || true
    fi
  fi
  if [[ -f "$PIDFILE" ]]; then
    local pid
    pid=$(cat "$PIDFILE")
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$PIDFILE"
  fi
  rm -f "$SOCK"
  # conmon of a container removed above, or of an exec session, may linger
  # up to exit_command_delay: only ours (their command line names our dirs).
  local left
  for _ in $(seq 50); do
    left=$(pgrep -f "conmon.*$ENGINE_DIR" || true)
    [[ -z "$left" ]] && break
    sleep 0.2
  done
  if [[ -n "$left" ]]; then
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
  fi
  # A container the service could not remove must not outlive it either.
  left=$(container_processes)
  # shellcheck disable=SC2086
  if [[ -n "$left" ]]; then log "killing container processes left running: $(echo $left)"; kill -KILL $left 2>/dev/null || true; fi
  # A conmon that exited with the service is a zombie until init reaps it
  # (it has no command line left to match above): wait for that too.
  for _ in $(seq 50); do
    pgrep -x conmon >/dev/null || break
    sleep 0.2
  done
  log "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) write_config; print_env ;;
  status) export_env; answers ;;
  podman) shift; remote "$@" ;;
  *) die "usage: $0 start|stop|env|status|podman ARGS..." ;;
esac
