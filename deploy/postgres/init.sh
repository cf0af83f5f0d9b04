#!/bin/sh
# Runs once, when the postgres container starts on an empty volume: the Temporal server's role and its two
# databases next to the service's own (POSTGRES_DB). Passwords come from the environment (.env).
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v temporal_password="${TEMPORAL_DB_PASSWORD:?set TEMPORAL_DB_PASSWORD}" <<'SQL'
CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
SQL
