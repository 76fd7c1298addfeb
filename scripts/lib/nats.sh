# shellcheck shell=bash
# A throwaway nats-server with JetStream, sourced by scripts/test and scripts/ha.
#
#   nats_start DIR  install nats-server from its Debian package if absent, then start it on
#                   127.0.0.1 on a free port with JetStream on (its storage in DIR/js, its log in
#                   DIR/nats.log, its PID in DIR/nats.pid), wait until its monitoring endpoint says
#                   it is healthy, and export
#                     NATS_URL  nats://127.0.0.1:PORT
#                     NATS_PID  the server's PID
#   nats_stop DIR   stop the server of DIR/nats.pid (SIGTERM, SIGKILL after 10 s) and remove DIR;
#                   safe to call when nats_start failed.
#
# The server is started with every descriptor redirected, so it outlives the script that started
# it (scripts/ha) and never holds a caller's pipe open.

_nats_say() { printf 'nats.sh: %s\n' "$*" >&2; }

# The nats-server binary (PATH, then the Debian package's /usr/sbin), or nothing.
_nats_bin() {
  local b
  b=$(command -v nats-server 2>/dev/null) || b=
  [ -z "$b" ] && [ -x /usr/sbin/nats-server ] && b=/usr/sbin/nats-server
  [ -n "$b" ] && printf '%s\n' "$b"
}

_nats_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# apt-get install nats-server (as scripts/lib/postgres.sh installs PostgreSQL).
_nats_apt() {
  _nats_say "nats-server not found; installing the Debian package nats-server with apt-get"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null; }; then
    _nats_say "apt-get install nats-server failed: install nats-server (NATS with JetStream, 2.9 or newer) and re-run"
    return 1
  fi
}

# True while PID runs (a zombie left for a parent that never reaps it counts as stopped).
_nats_running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# True when the monitoring endpoint on PORT says the server (JetStream included) is healthy.
_nats_healthy() {
  local port=$1
  if command -v curl >/dev/null; then
    curl -fsS -m 2 "http://127.0.0.1:$port/healthz" 2>/dev/null | grep -q '"ok"'
  else
    # Without curl, a TCP connect to the monitoring port is the best sign there is.
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
  fi
}

nats_start() {
  local dir=${1:?usage: nats_start DIR}
  local bin port mport pid i
  bin=$(_nats_bin) || true
  if [ -z "$bin" ]; then
    _nats_apt || return 1
    bin=$(_nats_bin) || true
    if [ -z "$bin" ]; then
      _nats_say "the nats-server package was installed but no nats-server binary is on PATH or in /usr/sbin"
      return 1
    fi
  fi
  mkdir -p "$dir/js"
  dir=$(cd "$dir" && pwd)
  port=$(_nats_free_port) && mport=$(_nats_free_port) ||
    { _nats_say "could not pick a free port (python3 missing?)"; return 1; }
  "$bin" -a 127.0.0.1 -p "$port" -m "$mport" -js -sd "$dir/js" -P "$dir/nats.pid" \
    </dev/null >>"$dir/nats.log" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" >"$dir/nats.pid"
  for i in $(seq 1 100); do
    if ! _nats_running "$pid"; then
      _nats_say "nats-server exited at start; its log ($dir/nats.log):"
      tail -n 20 "$dir/nats.log" >&2
      return 1
    fi
    _nats_healthy "$mport" && break
    if [ "$i" = 100 ]; then
      _nats_say "nats-server is not healthy on 127.0.0.1:$mport after 30 s; its log ($dir/nats.log):"
      tail -n 20 "$dir/nats.log" >&2
      return 1
    fi
    sleep 0.3
  done
  export NATS_URL="nats://127.0.0.1:$port"
  export NATS_PID=$pid
  _nats_say "$("$bin" --version) is up with JetStream: $NATS_URL (pid $pid, monitoring http://127.0.0.1:$mport)"
}

nats_stop() {
  local dir=${1:?usage: nats_stop DIR}
  [ -d "$dir" ] || return 0
  local pid i
  pid=$(cat "$dir/nats.pid" 2>/dev/null) || pid=
  if [ -n "$pid" ] && _nats_running "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do
      _nats_running "$pid" || break
      [ "$i" = 100 ] && { _nats_say "nats-server (pid $pid) ignored SIGTERM for 10 s; killing it"; kill -KILL "$pid" 2>/dev/null || true; }
      sleep 0.1
    done
  fi
  rm -rf "$dir"
}
