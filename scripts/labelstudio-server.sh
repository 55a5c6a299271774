#!/usr/bin/env bash
# Install, start and stop a local Label Studio server for judgekit (development and tests).
#
# Label Studio pins openai<2, pyarrow<25, pytz<2023 and Django 5.2, so it cannot share judgekit's
# virtual environment: it lives in its own venv (default .cache/labelstudio-venv under the repo).
#
#   bash scripts/labelstudio-server.sh install            # idempotent; ~90 s the first time
#   bash scripts/labelstudio-server.sh start [--port 8080] [--data-dir DIR] \
#        [--user admin@example.com] [--password PW] [--token TOKEN]
#        (password: --password, env JUDGEKIT_LS_PASSWORD, or a random one written to
#        DATA_DIR/admin-password; token: --token or env LABEL_STUDIO_API_KEY)
#   bash scripts/labelstudio-server.sh stop   [--data-dir DIR]
#   bash scripts/labelstudio-server.sh status [--data-dir DIR]
#
# `start` installs if needed, binds to 127.0.0.1 only, waits for /health and prints two lines:
#   LABEL_STUDIO_URL=http://127.0.0.1:PORT
#   LABEL_STUDIO_PID=PID
# The PID is also written to DATA_DIR/server.pid and the log to DATA_DIR/server.log; `stop`
# signals exactly that PID. The token is never printed (you chose it; read it from your shell).
# Environment: JUDGEKIT_LS_VENV (venv folder), JUDGEKIT_LS_VERSION (pip requirement version),
# LABEL_STUDIO_API_KEY (token for `start` when --token is not given).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${JUDGEKIT_LS_VENV:-$ROOT/.cache/labelstudio-venv}"
VERSION="${JUDGEKIT_LS_VERSION:-1.23.2}"
PY="${PYTHON:-python3}"

die() { echo "labelstudio-server: $*" >&2; exit 2; }

install_server() {
    local marker="$VENV/.judgekit-installed-$VERSION"
    [ -f "$marker" ] && return 0
    mkdir -p "$(dirname "$VENV")"
    # One installer at a time (two test runs starting together share the venv).
    exec 9>"$(dirname "$VENV")/.labelstudio-install.lock"
    flock 9
    if [ ! -f "$marker" ]; then
        echo "labelstudio-server: installing label-studio==$VERSION into $VENV (first time ~90 s)" >&2
        rm -rf "$VENV"
        "$PY" -m venv "$VENV" || die "cannot create a virtual environment with $PY -m venv"
        "$VENV/bin/pip" install -q --disable-pip-version-check --upgrade pip >&2 \
            || die "pip could not upgrade itself in $VENV"
        "$VENV/bin/pip" install -q --disable-pip-version-check "label-studio==$VERSION" >&2 \
            || die "pip could not install label-studio==$VERSION (is PyPI reachable?)"
        touch "$marker"
    fi
    flock -u 9
}

PORT=8080
DATA="$ROOT/.cache/labelstudio-data"
USER_EMAIL="admin@example.com"
PASSWORD="${JUDGEKIT_LS_PASSWORD:-}"
TOKEN="${LABEL_STUDIO_API_KEY:-}"
TIMEOUT=180

parse_opts() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --port) PORT="$2"; shift 2 ;;
            --data-dir) DATA="$2"; shift 2 ;;
            --user) USER_EMAIL="$2"; shift 2 ;;
            --password) PASSWORD="$2"; shift 2 ;;
            --token) TOKEN="$2"; shift 2 ;;
            --timeout) TIMEOUT="$2"; shift 2 ;;
            *) die "unknown option $1 (see the header of this script)" ;;
        esac
    done
}

# Whether PID is the Label Studio started on DATA. A PID file can outlive its server (a crash, a
# reboot) and its number be reused by an unrelated process: never signal that one.
is_ours() {
    local pid="$1"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    [ -r "/proc/$pid/cmdline" ] || return 0   # no /proc (not Linux): trust the PID file
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "label-studio start --no-browser" \
        && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--data-dir $DATA "
}

start_server() {
    install_server
    [ -n "$TOKEN" ] || die "give --token TOKEN or set LABEL_STUDIO_API_KEY (the API token to create)"
    # Label Studio ignores a token of 5 characters or fewer and prints it into its log.
    [ "${#TOKEN}" -ge 6 ] || die "the API token must be at least 6 characters (e.g. python3 -c 'import secrets; print(secrets.token_hex(20))')"
    command -v curl >/dev/null || die "curl is needed to wait for /health; install it (apt-get install curl)"
    mkdir -p "$DATA"
    DATA="$(cd "$DATA" && pwd)"
    if [ -z "$PASSWORD" ]; then
        # No password given: make one and keep it beside the data (readable by you only).
        if [ ! -s "$DATA/admin-password" ]; then
            (umask 077; "$PY" -c 'import secrets; print(secrets.token_urlsafe(16))' >"$DATA/admin-password")
        fi
        PASSWORD="$(cat "$DATA/admin-password")"
        echo "labelstudio-server: log in as $USER_EMAIL with the password in $DATA/admin-password" >&2
    fi
    if [ -f "$DATA/server.pid" ] && is_ours "$(cat "$DATA/server.pid")"; then
        die "a server from $DATA is already running (pid $(cat "$DATA/server.pid")); stop it first"
    fi
    local log="$DATA/server.log"
    : >"$log"
    # Plain USERNAME/PASSWORD/PORT/HOST are read by Label Studio as fallbacks: unset them.
    # The LABEL_STUDIO_*/SENTRY variables keep it from phoning home. The password and the token
    # go in the environment, not on the command line: any local user can read a process's
    # arguments (ps), only its owner its environment.
    env -u USERNAME -u PASSWORD -u PORT -u HOST -u USER_TOKEN \
        LABEL_STUDIO_PASSWORD="$PASSWORD" LABEL_STUDIO_USER_TOKEN="$TOKEN" \
        LABEL_STUDIO_BASE_DATA_DIR="$DATA" \
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true \
        LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK=true \
        LABEL_STUDIO_LATEST_VERSION_CHECK=false \
        LABEL_STUDIO_COLLECT_ANALYTICS=false \
        SENTRY_DSN= FRONTEND_SENTRY_DSN= \
        "$VENV/bin/label-studio" start --no-browser --internal-host 127.0.0.1 --port "$PORT" \
        --data-dir "$DATA" --username "$USER_EMAIL" --enable-legacy-api-token \
        >>"$log" 2>&1 </dev/null &
    local pid=$!
    echo "$pid" >"$DATA/server.pid"
    # A busy port is silently replaced by the next one: read the port it actually uses.
    local deadline=$((SECONDS + TIMEOUT)) url=""
    while [ $SECONDS -lt $deadline ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "--- last lines of $log ---" >&2
            tail -n 20 "$log" >&2
            die "label-studio exited before answering /health (log: $log)"
        fi
        local actual
        actual="$(grep -o 'Starting development server at http://[^/ ]*' "$log" | tail -n1 | sed 's#.*http://##')" || true
        if [ -n "$actual" ]; then
            url="http://127.0.0.1:${actual##*:}"
            if curl -fsS -m 2 "$url/health" 2>/dev/null | grep -q '"UP"'; then
                echo "LABEL_STUDIO_URL=$url"
                echo "LABEL_STUDIO_PID=$pid"
                return 0
            fi
        fi
        sleep 0.5
    done
    kill "$pid" 2>/dev/null || true
    tail -n 20 "$log" >&2
    die "label-studio did not answer /health within ${TIMEOUT}s (log: $log)"
}

stop_server() {
    local pidfile="$DATA/server.pid"
    [ -f "$pidfile" ] || { echo "labelstudio-server: no server.pid in $DATA; nothing to stop" >&2; return 0; }
    local pid
    pid="$(cat "$pidfile")"
    DATA="$(cd "$DATA" && pwd)"
    if ! is_ours "$pid"; then
        echo "labelstudio-server: pid $pid in $pidfile is not a Label Studio on $DATA (stale file); removed it, signalled nothing" >&2
    else
        kill -TERM "$pid"
        # (a zombie has an empty cmdline: is_ours counts it as gone)
        for _ in $(seq 1 40); do is_ours "$pid" || break; sleep 0.25; done
        is_ours "$pid" && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
    install) install_server; echo "$VENV/bin/label-studio" ;;
    start) parse_opts "$@"; start_server ;;
    stop) parse_opts "$@"; stop_server ;;
    status)
        parse_opts "$@"
        [ -d "$DATA" ] && DATA="$(cd "$DATA" && pwd)"
        if [ -f "$DATA/server.pid" ] && is_ours "$(cat "$DATA/server.pid")"; then
            echo "running (pid $(cat "$DATA/server.pid"))"
        else
            echo "not running"; exit 1
        fi ;;
    path) echo "$VENV/bin/label-studio" ;;
    *) die "usage: labelstudio-server.sh install|start|stop|status|path [options]" ;;
esac
