# shellcheck shell=bash
# Throwaway PostgreSQL servers for tests, sourced by scripts/test.
#
#   pg_start DIR [plain]
#                  install PostgreSQL (and openssl) from Debian packages if absent, then start two
#                  servers on 127.0.0.1 on free ports (unix sockets inside DIR), each with a database
#                  `flotilla`, and export what the tests read (with `plain`, only the first server
#                  and only FLOTILLA_TEST_POSTGRES_URL: scripts/ha):
#                    FLOTILLA_TEST_POSTGRES_URL              the plaintext server (no TLS at all):
#                                                            postgres://postgres@127.0.0.1:PORT/flotilla
#                    FLOTILLA_TEST_POSTGRES_TLS_URL          the TLS server, same form (trust auth for
#                                                            postgres, over TLS or not)
#                    FLOTILLA_TEST_POSTGRES_TLS_CA           PEM of the CA that signed its certificate
#                                                            (SANs: DNS localhost, IP 127.0.0.1)
#                    FLOTILLA_TEST_POSTGRES_TLS_CLIENT_CERT  a client certificate (CN flotilla_cert) and
#                    FLOTILLA_TEST_POSTGRES_TLS_CLIENT_KEY   its key: the role flotilla_cert (CREATEDB)
#                                                            may log in only over TLS with it
#   pg_stop DIR    stop both servers (fast) and remove DIR; safe to call when pg_start failed.
#
# PostgreSQL refuses to run as root, so as root the servers run as the `postgres` OS user
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

# apt-get install PACKAGE (WHY says what it is for).
_pg_apt() {
  local package=$1 why=$2
  _pg_say "$why not found; installing the Debian package $package with apt-get"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null; }; then
    _pg_say "apt-get install $package failed: install $package ($why) and re-run"
    return 1
  fi
}

# A CA, a server certificate for localhost/127.0.0.1 and a client certificate for the role
# flotilla_cert, in CERTS. The server's key must belong to the server user with mode 0600.
_pg_certs() {
  local certs=$1
  mkdir -p "$certs"
  (
    set -e
    cd "$certs"
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
    openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=flotilla test PostgreSQL CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=localhost"
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile server.ext -out server.crt
    openssl req "${ec[@]}" -keyout client.key -out client.csr -subj "/CN=flotilla_cert"
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
      "extendedKeyUsage=clientAuth" >client.ext
    openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile client.ext -out client.crt
    chmod 0600 server.key client.key ca.key
    chmod 0644 ca.crt server.crt client.crt
  ) >"$certs/openssl.log" 2>&1 || {
    _pg_say "generating the test certificates with openssl failed:"
    cat "$certs/openssl.log" >&2
    return 1
  }
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$certs/server.key" "$certs/server.crt"
  fi
}

# initdb into DIR/data and start it on a free port; OPTIONS are extra server `-c` settings.
# Prints the port.
_pg_instance() {
  local bin=$1 dir=$2 hba=$3 options=$4 port i
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  port=$(_pg_free_port) || { _pg_say "could not pick a free port (python3 missing?)"; return 1; }
  if ! _pg_as "$dir" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1; then
    _pg_say "initdb failed:"
    cat "$dir/initdb.log" >&2
    return 1
  fi
  if [ -n "$hba" ]; then
    printf '%s\n' "$hba" >"$dir/data/pg_hba.conf"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/data/pg_hba.conf"
  fi
  # Loopback only; the unix socket stays inside DIR so nothing else on the machine is touched.
  if ! _pg_as "$dir" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c max_connections=200 $options" \
      start >/dev/null; then
    _pg_say "the server did not start; its log:"
    cat "$dir/server.log" >&2
    return 1
  fi
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
  printf '%s\n' "$port"
}

pg_start() {
  local dir=${1:?usage: pg_start DIR}
  local bin port tls_port
  bin=$(_pg_bin) || true
  if [ -z "$bin" ]; then
    _pg_apt postgresql "the PostgreSQL server (/usr/lib/postgresql/*/bin/initdb)" || return 1
    bin=$(_pg_bin) || true
    if [ -z "$bin" ]; then
      _pg_say "postgresql was installed but no /usr/lib/postgresql/*/bin/initdb exists"
      return 1
    fi
  fi
  command -v openssl >/dev/null || _pg_apt openssl "openssl (it makes the test certificates)" || return 1

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

  port=$(_pg_instance "$bin" "$dir/plain" "" "") || return 1
  export FLOTILLA_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/flotilla"
  _pg_say "$("$bin/postgres" --version) is up without TLS: $FLOTILLA_TEST_POSTGRES_URL"
  [ "${2:-}" = plain ] && return 0

  local certs="$dir/certs"
  _pg_certs "$certs" || return 1
  # flotilla_cert logs in only with its client certificate; everyone else as before.
  local hba
  hba=$(printf '%s\n' \
    "local all all trust" \
    "hostssl all flotilla_cert 127.0.0.1/32 cert" \
    "host all flotilla_cert 127.0.0.1/32 reject" \
    "host all all 127.0.0.1/32 trust")
  tls_port=$(_pg_instance "$bin" "$dir/tls" "$hba" \
    "-c ssl=on -c ssl_cert_file=$certs/server.crt -c ssl_key_file=$certs/server.key -c ssl_ca_file=$certs/ca.crt") || return 1
  if ! _pg_as "$dir/tls" "$bin/psql" -q -h 127.0.0.1 -p "$tls_port" -U postgres -d flotilla \
      -c "CREATE ROLE flotilla_cert LOGIN CREATEDB" >/dev/null; then
    _pg_say "creating the role flotilla_cert failed"
    return 1
  fi
  export FLOTILLA_TEST_POSTGRES_TLS_URL="postgres://postgres@127.0.0.1:$tls_port/flotilla"
  export FLOTILLA_TEST_POSTGRES_TLS_CA="$certs/ca.crt"
  export FLOTILLA_TEST_POSTGRES_TLS_CLIENT_CERT="$certs/client.crt"
  export FLOTILLA_TEST_POSTGRES_TLS_CLIENT_KEY="$certs/client.key"
  _pg_say "and with TLS: $FLOTILLA_TEST_POSTGRES_TLS_URL (CA $FLOTILLA_TEST_POSTGRES_TLS_CA)"
}

pg_stop() {
  local dir=${1:?usage: pg_stop DIR}
  [ -d "$dir" ] || return 0
  local bin instance
  bin=$(_pg_bin) || true
  for instance in "$dir/plain" "$dir/tls"; do
    if [ -n "$bin" ] && [ -f "$instance/data/postmaster.pid" ]; then
      _pg_as "$instance" "$bin/pg_ctl" -D "$instance/data" stop -m fast -w -t 60 >/dev/null ||
        _pg_say "pg_ctl stop of $instance failed; removing $dir anyway"
    fi
  done
  rm -rf "$dir"
}
