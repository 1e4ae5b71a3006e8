# Throwaway PostgreSQL servers for the postgres store's tests: Debian's postgresql (installed when missing),
# clusters made by initdb in temporary folders as the postgres user, each on a free port on 127.0.0.1.
# Sourced by .ci/run, which gives: free_port, and pids to kill at the end. Two clusters: one that every test
# shares (each test makes its own database), and one that only the restart test stops and starts, so that
# the tests running beside it keep their server.
# Exports PROVEVI_TEST_PG_URL (the shared server), and PROVEVI_TEST_PG_RESTART_URL, PROVEVI_TEST_PG_DATA and
# PROVEVI_TEST_PG_CTL (a command that runs pg_ctl on the restart cluster as the postgres user:
# `$PROVEVI_TEST_PG_CTL stop -m fast`, `$PROVEVI_TEST_PG_CTL start`).
# A third cluster takes TLS only (hostssl lines, no host lines), with a certificate for the name "localhost"
# from a throwaway CA made by openssl at start in the cluster's folder; the user postgres is trusted over TLS
# (to make databases and roles), every other user gives a password (scram-sha-256). It exports
# PROVEVI_TEST_PG_TLS_URL (postgres, ?sslmode=require), PROVEVI_TEST_PG_TLS_CA (the CA that signed the
# server's certificate) and PROVEVI_TEST_PG_TLS_OTHER_CA (a CA that signed nothing of it).
pg_bin=""
for d in /usr/lib/postgresql/*/bin; do if [ -x "$d/initdb" ]; then pg_bin=$d; fi; done
if [ -z "$pg_bin" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  for d in /usr/lib/postgresql/*/bin; do if [ -x "$d/initdb" ]; then pg_bin=$d; fi; done
fi
if ! command -v openssl >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends openssl >/dev/null
fi
id -u postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres

# pg_tls: TLS-only access, with certificates, for the cluster in $pg_dir (before it starts).
pg_tls() {
  local d=$pg_dir ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
  openssl req -x509 $ec -days 2 -subj "/CN=provevi test CA" -keyout "$d/ca.key" -out "$d/ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -x509 $ec -days 2 -subj "/CN=provevi other CA" -keyout "$d/other-ca.key" -out "$d/other-ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -new $ec -subj "/CN=localhost" -keyout "$d/data/server.key" -out "$d/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$d/server.ext"
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
    -extfile "$d/server.ext" -out "$d/data/server.crt" 2>/dev/null
  chown postgres "$d/data/server.key" "$d/data/server.crt"
  chmod 600 "$d/data/server.key"
  cat >"$d/data/pg_hba.conf" <<HBA
local   all  all                 trust
hostssl all  postgres  127.0.0.1/32  trust
hostssl all  all       127.0.0.1/32  scram-sha-256
HBA
  printf "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\npassword_encryption = 'scram-sha-256'\n" \
    >>"$d/data/postgresql.conf"
}

# pg_cluster [tls]: makes and starts a cluster; sets pg_dir (its folder, with pg_ctl.sh) and pg_port.
pg_cluster() {
  pg_dir=$(mktemp -d /tmp/provevi-pg.XXXXXX)
  chown postgres "$pg_dir"
  pg_port=$(free_port)
  runuser -u postgres -- "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U postgres --no-sync >"$pg_dir/initdb.log" 2>&1
  cat >"$pg_dir/pg_ctl.sh" <<PGCTL
#!/usr/bin/env bash
exec runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
  -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" "\$@"
PGCTL
  chmod +x "$pg_dir/pg_ctl.sh"
  if [ "${1:-}" = tls ]; then pg_tls; fi
  "$pg_dir/pg_ctl.sh" start >/dev/null
  # .ci/run kills the pids at its end; the server is not one of them, so a watcher stops it then.
  (
    dir=$pg_dir
    sleep infinity &
    nap=$!
    trap 'kill $nap; "$dir/pg_ctl.sh" stop -m immediate >/dev/null 2>&1; rm -rf "$dir"; exit 0' TERM
    wait $nap
  ) &
  pids+=($!)
}

pg_cluster
export PROVEVI_TEST_PG_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres"
pg_cluster
export PROVEVI_TEST_PG_RESTART_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres"
export PROVEVI_TEST_PG_DATA="$pg_dir/data"
export PROVEVI_TEST_PG_CTL="$pg_dir/pg_ctl.sh"
pg_cluster tls
export PROVEVI_TEST_PG_TLS_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres?sslmode=require"
export PROVEVI_TEST_PG_TLS_CA="$pg_dir/ca.crt"
export PROVEVI_TEST_PG_TLS_OTHER_CA="$pg_dir/other-ca.crt"
