# shellcheck shell=bash
# Process, port, certificate and kubeconfig helpers shared by scripts/members and scripts/karmada.
# The sourcing script defines die MESSAGE (print and exit) first.

find_go() {
  local go=${GO:-}
  if [ -z "$go" ]; then
    go=$(command -v go || true)
    [ -n "$go" ] || [ ! -x /usr/local/go/bin/go ] || go=/usr/local/go/bin/go
  fi
  [ -n "$go" ] && [ -x "$(command -v "$go")" ] ||
    die "the Go toolchain is not installed: install Go >= 1.24 (https://go.dev/dl, or set GO=/path/to/go) and re-run"
  local v
  v=$("$go" env GOVERSION) || die "'$go env GOVERSION' failed: is $go a working Go toolchain?"
  case "$v" in
    go1.2[4-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
    *) die "$go is $v; the pinned tools/ modules need Go >= 1.24: install a newer Go (or set GO=/path/to/go) and re-run" ;;
  esac
  printf '%s\n' "$go"
}

envget() { # envget FILE KEY
  [ -r "$1" ] || return 0
  sed -n "s/^$2=//p" "$1" | tail -n1
}

# pick_port: sets PICKED to a port nothing listens on, distinct from earlier picks of this run.
# 20000-32767 stays below Linux's ephemeral range, where outgoing connections take their ports.
PICKS=" "
pick_port() {
  local p i
  for i in $(seq 1 500); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
    case "$PICKS" in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      PICKS+="$p "
      PICKED=$p
      return 0
    fi
  done
  die "found no free TCP port on 127.0.0.1 between 20000 and 32767"
}

# is_ours PID DIR: PID is alive and its command line mentions DIR (guards against PID reuse).
is_ours() {
  [ -n "$1" ] && [ -n "$2" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# stop_pids MARK PID…: SIGTERM, up to 10 s of grace, then SIGKILL; only processes whose command
# line holds MARK (the set's directory), so a PID reused by another process is left alone.
stop_pids() {
  local dir=$1 pid i left
  shift
  for pid in "$@"; do is_ours "$pid" "$dir" && kill -TERM "$pid" 2>/dev/null || true; done
  for i in $(seq 1 100); do
    left=0
    for pid in "$@"; do is_ours "$pid" "$dir" && left=1; done
    [ $left = 1 ] || return 0
    sleep 0.1
  done
  for pid in "$@"; do is_ours "$pid" "$dir" && kill -KILL "$pid" 2>/dev/null || true; done
  return 0
}

# spawn LOG CMD…: start CMD in its own session, immune to the caller's hangup; sets SPAWNED.
spawn() {
  local log=$1
  shift
  setsid nohup "$@" >"$log" 2>&1 </dev/null &
  SPAWNED=$!
}

tail_log() { # tail_log FILE: the end of a log, for error messages
  [ -s "$1" ] || return 0
  printf -- '--- last lines of %s ---\n' "$1" >&2
  tail -n 15 "$1" >&2
  printf -- '---\n' >&2
}

b64() { base64 | tr -d '\n'; }

write_kubeconfig() { # write_kubeconfig FILE NAME PORT CA USER TOKEN
  umask 077
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $2
  cluster:
    server: https://127.0.0.1:$3
    certificate-authority-data: $(b64 <"$4")
users:
- name: $5
  user:
    token: $6
contexts:
- name: $2
  context:
    cluster: $2
    user: $5
current-context: $2
EOF
}

make_ca() { # make_ca PKI_DIR
  mkdir -p "$1"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=${CA_NAME:-flotilla-members-ca}" -keyout "$1/ca.key" -out "$1/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null || die "openssl could not make the CA in $1"
}

need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null || die "'$c' is not installed: install it (Debian: apt-get install -y curl openssl util-linux coreutils; kubectl from https://kubernetes.io/docs/tasks/tools/) and re-run"
  done
}

abs_dir() { # abs_dir DIR → absolute path (DIR need not exist yet)
  case "$1" in /*) printf '%s\n' "${1%/}" ;; *) printf '%s\n' "$(pwd)/${1%/}" ;; esac
}
