#!/usr/bin/env bash
# A throwaway PostgreSQL server for huddle's tests and benchmarks: its own temp data directory,
# 127.0.0.1 on a free port, trust authentication, fsync off (HUDDLE_TEST_PG_FSYNC=on keeps it on, as a
# production server has it: the benchmarks that measure commits need it). It never touches another server.
#
#   eval "$(scripts/test-postgres.sh start)"   starts one; prints the exports (HUDDLE_TEST_PG_URL, HUDDLE_TEST_PG_DIR)
#   scripts/test-postgres.sh stop DIR          stops the one in DIR and removes DIR
#   scripts/test-postgres.sh crash DIR         restarts the one in DIR as after a crash (immediate stop, then recovery)
#   scripts/test-postgres.sh restart DIR       restarts the one in DIR as an administrator does (a fast shutdown, then a start)
#   scripts/test-postgres.sh down DIR          shuts the one in DIR down (fast), keeping it; `up DIR` starts it again
#   scripts/test-postgres.sh run CMD [ARGS…]   starts one, runs CMD with HUDDLE_TEST_PG_URL set, stops it
#
# Needs PostgreSQL's server binaries (Debian: apt-get install postgresql). As root, the server
# runs as the `postgres` user (initdb refuses root).
set -euo pipefail

find_bin() {
  local name=$1
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/$name" ]; then echo "$dir/$name"; return; fi
  done
  echo "test-postgres: $name not found; install PostgreSQL's server (Debian: apt-get install postgresql)" >&2
  exit 1
}

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  # A port nothing listens on now (the server's start below fails loudly if one took it meanwhile).
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# A start that fails leaves nothing behind: a server half started is stopped, its directory removed.
abandon() {
  local pg_ctl=$1 dir=$2
  as_owner "$pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

start() {
  local initdb pg_ctl dir port
  initdb=$(find_bin initdb)
  pg_ctl=$(find_bin pg_ctl)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/huddle-pg-XXXXXX")
  # Whatever ends this shell before the exports are printed (a failure, set -e) abandons the start.
  trap "abandon $(printf %q "$pg_ctl") $(printf %q "$dir")" EXIT
  chmod 755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
  as_owner "$initdb" -D "$dir/data" --auth=trust --username=postgres --encoding=UTF8 --no-instructions >"$dir/initdb.log" 2>&1 || {
    echo "test-postgres: initdb failed:" >&2
    cat "$dir/initdb.log" >&2
    exit 1
  }
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    # Kept for `up`, which starts it again on the same port.
    echo "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=${HUDDLE_TEST_PG_FSYNC:-off} -c full_page_writes=${HUDDLE_TEST_PG_FSYNC:-off} -c max_connections=400 -c shared_buffers=64MB" >"$dir/server.opts"
    if as_owner "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(cat "$dir/server.opts")" >/dev/null 2>&1; then
      trap - EXIT
      echo "export HUDDLE_TEST_PG_URL=postgres://postgres@127.0.0.1:$port/postgres"
      echo "export HUDDLE_TEST_PG_DIR=$dir"
      return
    fi
  done
  echo "test-postgres: the server did not start; its log:" >&2
  cat "$dir/server.log" >&2 || true
  exit 1
}

stop() {
  local dir=${1:?usage: test-postgres.sh stop DIR}
  [ -d "$dir/data" ] || return 0
  as_owner "$(find_bin pg_ctl)" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

crash() {
  local dir=${1:?usage: test-postgres.sh crash DIR}
  as_owner "$(find_bin pg_ctl)" -D "$dir/data" -m immediate -w -t 60 restart >/dev/null
}

restart() {
  local dir=${1:?usage: test-postgres.sh restart DIR}
  as_owner "$(find_bin pg_ctl)" -D "$dir/data" -m fast -w -t 60 restart >/dev/null
}

down() {
  local dir=${1:?usage: test-postgres.sh down DIR}
  as_owner "$(find_bin pg_ctl)" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
}

up() {
  local dir=${1:?usage: test-postgres.sh up DIR}
  as_owner "$(find_bin pg_ctl)" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(cat "$dir/server.opts")" >/dev/null
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  crash) crash "${2:-}" ;;
  restart) restart "${2:-}" ;;
  down) down "${2:-}" ;;
  up) up "${2:-}" ;;
  run)
    shift
    # Not `eval "$(start)"`: a failing command substitution inside eval would go unnoticed.
    exports=$(start)
    eval "$exports"
    trap 'stop "$HUDDLE_TEST_PG_DIR"' EXIT
    "$@"
    ;;
  *)
    echo "usage: $0 start | stop DIR | crash DIR | restart DIR | down DIR | up DIR | run CMD [ARGS…]" >&2
    exit 2
    ;;
esac
