#!/usr/bin/env bash
# Installs Debian's PostgreSQL server if missing (.ci/run normally has), starts it on 127.0.0.1:5432 and creates the test role and
# database. Prints the connection string on stdout. Idempotent: safe to run on a machine that already has it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
  pg_createcluster "$version" main >&2
fi
# Loopback only: tests never listen beyond this machine.
mkdir -p "/etc/postgresql/$version/main/conf.d"
printf "listen_addresses = '127.0.0.1'\nfsync = on\n" > "/etc/postgresql/$version/main/conf.d/customer-api.conf"
if ! pg_lsclusters -h | grep "^$version main" | grep -q online; then
  pg_ctlcluster "$version" main start >&2
fi
for _ in $(seq 1 30); do
  pg_isready -h 127.0.0.1 -p 5432 -q && break
  sleep 1
done
su postgres -c "psql -q -v ON_ERROR_STOP=1" >&2 <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'customer_api') THEN
    CREATE ROLE customer_api LOGIN PASSWORD 'customer_api';
  END IF;
END $$;
SELECT 'CREATE DATABASE customer_api_test OWNER customer_api'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'customer_api_test') \gexec
SQL
echo "postgres://customer_api:customer_api@127.0.0.1:5432/customer_api_test"
