# shellcheck shell=bash
# A throwaway PostgreSQL server for tests, sourced by scripts/test.
#
#   pg_start DIR   install PostgreSQL from Debian packages if absent, initdb into DIR, start it on
#                  127.0.0.1 on a free port (unix socket inside DIR, trust auth), create database
#                  `flotilla`, and export FLOTILLA_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/flotilla
#   pg_stop DIR    stop that server (fast) and remove DIR; safe to call when pg_start failed.
#
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` OS user
# (created by the Debian package) and DIR is handed to it.

_pg_say() { printf 'postgres.sh: %s\n' "$*" >&2; }

# The newest installed server's bin directory, or nothing.
_pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && printf '%s\n' "$d"
}

# Run a command as the server's OS user (postgres when we are root, else ourselves), from
# inside DIR so the server user can always read its working directory.
_pg_as() {
  local dir=$1
  shift
  if [ "$(id -u)" = 0 ]; then
    (cd "$dir" && runuser -u postgres -- "$@")
  else
    (cd "$dir" && "$@")
  fi
}

_pg_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_start() {
  local dir=${1:?usage: pg_start DIR}
  local bin port
  bin=$(_pg_bin) || true
  if [ -z "$bin" ]; then
    _pg_say "PostgreSQL server not found under /usr/lib/postgresql; installing it with apt-get"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }; then
      _pg_say "apt-get install postgresql failed: install the PostgreSQL server package (it provides initdb and pg_ctl) and re-run"
      return 1
    fi
    bin=$(_pg_bin) || true
    if [ -z "$bin" ]; then
      _pg_say "postgresql was installed but no /usr/lib/postgresql/*/bin/initdb exists"
      return 1
    fi
  fi

  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
      _pg_say "there is no postgres OS user to run the server as (the postgresql package creates it)"
      return 1
    fi
    chown postgres: "$dir"
    # The server user must be able to reach DIR: let it traverse our (private) parent dirs.
    local p
    p=$(dirname "$dir")
    while [ "$p" != / ]; do
      runuser -u postgres -- test -x "$p" || chmod o+x "$p"
      p=$(dirname "$p")
    done
  fi

  port=$(_pg_free_port) || { _pg_say "could not pick a free port (python3 missing?)"; return 1; }
  if ! _pg_as "$dir" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1; then
    _pg_say "initdb failed:"
    cat "$dir/initdb.log" >&2
    return 1
  fi
  # Loopback only; the unix socket stays inside DIR so nothing else on the machine is touched.
  if ! _pg_as "$dir" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200" \
      start >/dev/null; then
    _pg_say "the server did not start; its log:"
    cat "$dir/server.log" >&2
    return 1
  fi
  local i
  for i in $(seq 1 60); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
    [ "$i" = 60 ] && { _pg_say "the server is not accepting connections on 127.0.0.1:$port"; cat "$dir/server.log" >&2; return 1; }
    sleep 0.5
  done
  if ! _pg_as "$dir" "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres flotilla; then
    _pg_say "createdb flotilla failed; the server log:"
    cat "$dir/server.log" >&2
    return 1
  fi
  export FLOTILLA_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/flotilla"
  _pg_say "$("$bin/postgres" --version) is up: $FLOTILLA_TEST_POSTGRES_URL"
}

pg_stop() {
  local dir=${1:?usage: pg_stop DIR}
  [ -d "$dir" ] || return 0
  local bin
  bin=$(_pg_bin) || true
  if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
    _pg_as "$dir" "$bin/pg_ctl" -D "$dir/data" stop -m fast -w -t 60 >/dev/null ||
      _pg_say "pg_ctl stop failed; removing $dir anyway"
  fi
  rm -rf "$dir"
}
