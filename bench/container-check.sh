#!/usr/bin/env bash
# The container check: builds the image and runs it for real with podman and podman-compose, checking what
# docs/containers.md and docs/replicas.md promise. Not part of CI (it needs a container
# engine and a few minutes); a maintainer runs it, as root, on a machine with podman:
#
#   apt-get install -y podman podman-compose debootstrap     # Debian 12; npm (any Node.js) for the stand-ins
#   bench/container-check.sh
#
# It prints each check with PASS or FAIL and its time, the image's size, and a summary; exits 1 if a check
# failed. It removes every container, volume and network it made, on success, failure or Ctrl-C; images stay
# (the next run reuses them).
#
#   1. the image builds (podman build --format docker, so its HEALTHCHECK is kept);
#   2. the zero-configuration demo container: healthy, reachable through its published port, its banner, and
#      as user `node` `emr-bridge backup`, `emr-bridge fhir-get`, a graceful stop, `emr-bridge migrate` on its
#      volume (the commands of docs/containers.md), and a read-only root filesystem;
#   3. compose.yaml with podman-compose: the migrate job exits 0, both replicas ready, the balancer healthy,
#      signed webhooks through the balancer taken by both replicas, the admin CLI in a replica,
#      `emr-bridge migrate` against its PostgreSQL, no secret in any container's environment, and the
#      HEALTHCHECK (the image's, and the replicas') staying healthy while PostgreSQL is stopped.
#
# Base images it cannot find locally or pull (a machine without Docker Hub) are built as local STAND-INS,
# from Debian (debootstrap, the mirror apt uses here) and the npm registry (node-linux-<arch>, npm):
# bench/container/*.Containerfile, each labelled as a stand-in. CHECK_STANDINS=always builds them even when
# the real ones could be pulled; CHECK_STANDINS=never refuses to.
#
# Where podman cannot start a container with its defaults (a sandbox without CAP_SYS_RESOURCE, no crun
# support), it retries with its own containers.conf (runc, no-higher-than-allowed ulimits) through
# CONTAINERS_CONF, never touching /etc/containers. Without systemd podman runs no health checks by itself:
# this script runs them (`podman healthcheck run`), as the engine's timer would.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${CHECK_WORK:-/var/tmp/emr-bridge-container-check}
PROJECT=emr-bridge-check
NET=${PROJECT}_default
IMAGE=localhost/emr-bridge:latest
STANDINS=${CHECK_STANDINS:-auto}
BASE_TAG=localhost/emr-bridge-check/bookworm:latest
DEMO=${PROJECT}-demo
DEMO_VOLUME=${PROJECT}-demo-data
HC=${PROJECT}-healthcheck
STARTED=$(date +%s)
FAILED=0
PASSED=0
RESULTS=()
NOTES=()

# --- output ---------------------------------------------------------------------------------------------

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
say() { printf '%s\n' "$*"; }
section() { printf '\n== %s\n' "$*"; }
pass() {
  PASSED=$((PASSED + 1))
  RESULTS+=("PASS  $1")
  printf 'PASS  %s\n' "$1"
}
fail() {
  FAILED=$((FAILED + 1))
  RESULTS+=("FAIL  $1")
  printf 'FAIL  %s\n' "$1"
  if [ -n "${2:-}" ]; then printf '%s\n' "$2" | tail -n 25 | sed 's/^/      | /'; fi
}
# check "what" command…: PASS or FAIL by the command's exit status, with its time; its output on FAIL.
check() {
  local what=$1 t out
  shift
  t=$(now)
  if out=$("$@" 2>&1); then pass "$what ($(since "$t"))"; else fail "$what ($(since "$t"))" "$out"; fi
}
# Retries a command until it succeeds or `seconds` pass.
wait_for() {
  local seconds=$1 deadline
  shift
  deadline=$(($(date +%s) + seconds))
  until "$@" > /dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then return 1; fi
    sleep 1
  done
}

# HTTP from the host; from inside a container of the image (node's fetch: no curl in the slim image).
host_status() { python3 -c 'import sys, urllib.request
try: print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except Exception as e: print(getattr(e, "code", "none"))' "$1"; }
host_ok() { [ "$(host_status "$1")" = 200 ]; }
readyz() { podman exec "$1" node -e "fetch('http://127.0.0.1:3000/readyz').then((r) => console.log(r.status), (e) => console.log('none: ' + (e.cause?.message ?? e.message)))" 2> /dev/null; }
ready() { [ "$(readyz "$1")" = 200 ]; }
not_ready() { [ "$(readyz "$1")" = 503 ]; }
# One run of the container's health check, as the engine's timer would run it: exit 0 when healthy.
health() { podman healthcheck run "$1" > /dev/null 2>&1; }

# --- clean-up -------------------------------------------------------------------------------------------

compose() { (cd "$WORK/compose" && podman-compose -p "$PROJECT" "$@"); }

cleanup() {
  set +e
  # Containers with their anonymous volumes (the image's /data), then what compose made (named volumes).
  for c in $(podman ps -a --format '{{.Names}}' | grep -E "^${PROJECT}[-_]"); do podman rm -f -v -t 5 "$c" > /dev/null 2>&1; done
  if [ -f "$WORK/compose/compose.yaml" ]; then compose down -v > "$WORK/compose-down.log" 2>&1; fi
  for v in $(podman volume ls --format '{{.Name}}' | grep -E "^${PROJECT}[-_]"); do podman volume rm -f "$v" > /dev/null 2>&1; done
  podman network exists "$NET" 2> /dev/null && podman network rm -f "$NET" > /dev/null 2>&1
  rm -rf "$WORK/compose/secrets" "$WORK/hc.env"
  local left
  left=$(podman ps -a --format '{{.Names}}' | grep -cE "^${PROJECT}[-_]")
  say ""
  say "clean-up: $left of this check's containers left"
}

summary() {
  local code=$?
  if [ "$code" -ne 0 ] && [ -n "${ERR_LINE:-}" ]; then
    FAILED=$((FAILED + 1))
    RESULTS+=("FAIL  the check itself stopped at bench/container-check.sh line $ERR_LINE (exit $code)")
  fi
  cleanup
  say ""
  say "== summary ($(awk -v s="$STARTED" -v e="$(date +%s)" 'BEGIN { printf "%d s", e - s }') in all)"
  for r in "${NOTES[@]}"; do say "$r"; done
  for r in "${RESULTS[@]}"; do say "$r"; done
  say "$PASSED passed, $FAILED failed"
  say "images kept for the next run: $IMAGE and the bases above (podman rmi them to free the space)"
  if [ "$FAILED" -gt 0 ] || [ "$code" -ne 0 ]; then exit 1; fi
}

# --- what it needs --------------------------------------------------------------------------------------

if [ "$(id -u)" != 0 ]; then
  say "run it as root (rootful podman: the replicas' network and published ports)"
  exit 2
fi
for tool in podman podman-compose python3; do
  command -v "$tool" > /dev/null || {
    say "needs $tool (Debian: apt-get install -y podman podman-compose debootstrap)"
    exit 2
  }
done
mkdir -p "$WORK"
cleanup > /dev/null 2>&1 # what an interrupted run may have left
trap summary EXIT
trap 'ERR_LINE=$LINENO' ERR
trap 'exit 130' INT TERM

section "podman"
compose_version=$(podman-compose version 2> /dev/null || true)
compose_version=$(grep -m1 'podman-compose' <<< "$compose_version" | grep -oE '[0-9][0-9.]*$' || true)
say "$(podman --version); podman-compose ${compose_version:-(version unknown)}"

# A container podman can start, else the same with this check's own containers.conf.
probe_runtime() { podman run --rm --pull=never "$1" true; }

# The Debian mirror apt uses here (deb822 or one-line sources), for debootstrap.
debian_mirror() {
  if [ -n "${CHECK_MIRROR:-}" ]; then
    echo "$CHECK_MIRROR"
    return
  fi
  local m
  m=$(grep -hsE '^\s*URIs:' /etc/apt/sources.list.d/*.sources | awk '{ print $2 }' | grep -vi security | head -n 1)
  [ -n "$m" ] || m=$(grep -hsE '^\s*deb\s' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{ print $2 }' | grep -i debian | grep -vi security | head -n 1)
  echo "${m:-http://deb.debian.org/debian}"
}

# Debian bookworm from debootstrap, imported as BASE_TAG: what every stand-in starts from.
build_base() {
  if podman image exists "$BASE_TAG"; then return; fi
  command -v debootstrap > /dev/null || {
    say "needs debootstrap to build the stand-ins (apt-get install -y debootstrap)"
    return 1
  }
  local rootfs=$WORK/rootfs mirror t
  mirror=$(debian_mirror)
  t=$(now)
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$WORK/debootstrap.log" 2>&1 || {
    tail -n 20 "$WORK/debootstrap.log"
    return 1
  }
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  tar --numeric-owner -C "$rootfs" -c . | podman import --change 'CMD ["bash"]' - "$BASE_TAG" > /dev/null
  rm -rf "$rootfs"
  say "built $BASE_TAG: debootstrap bookworm from $mirror ($(since "$t"))"
}

# The image compose.yaml or the Dockerfile names: present, else pulled (CHECK_STANDINS=auto), else a stand-in.
ensure_image() {
  local name=$1 recipe=$2 t
  # A node stand-in of another Node.js version than package.json's is stale: built again.
  if [ "$recipe" = node_recipe ] && podman image exists "$name" && podman image inspect --format '{{index .Labels "org.opencontainers.image.description"}}' "$name" | grep -q STAND-IN &&
    [ "$(podman run --rm "$name" node --version)" != "v$(node_version)" ]; then
    podman rmi -f "$name" > /dev/null
  fi
  if [ "$STANDINS" != always ] && podman image exists "$name"; then
    NOTES+=("base: $name, present here ($(podman image inspect --format '{{index .Labels "org.opencontainers.image.description"}}' "$name" | grep -o 'STAND-IN.*' || echo 'not a stand-in'))")
    say "${NOTES[-1]}"
    return
  fi
  if [ "$STANDINS" = auto ] && timeout 60 podman pull -q "$name" > /dev/null 2>&1; then
    NOTES+=("base: $name, pulled")
    say "${NOTES[-1]}"
    return
  fi
  if [ "$STANDINS" = never ]; then
    say "cannot pull $name and CHECK_STANDINS=never"
    return 1
  fi
  build_base
  t=$(now)
  "$recipe" "$name"
  NOTES+=("base: $name, built here as a STAND-IN from bench/container/ ($(since "$t"))")
  say "${NOTES[-1]}"
}

arch() { case "$(uname -m)" in x86_64) echo x64 ;; aarch64) echo arm64 ;; *) uname -m ;; esac; }

# The Node.js version the project pins (package.json's `node` package, in either dependency list).
node_version() {
  python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); print({**p.get("devDependencies", {}), **p.get("dependencies", {})}.get("node", "24"))' "$ROOT/package.json"
}

node_recipe() {
  local ctx=$WORK/node-context version
  version=$(node_version)
  command -v npm > /dev/null || {
    say "needs npm (any Node.js) to fetch node-linux-$(arch)@$version for the node stand-in"
    return 1
  }
  rm -rf "$ctx" && mkdir -p "$ctx/node" "$ctx/npm"
  (cd "$ctx" && npm pack --silent "node-linux-$(arch)@$version" > node.txt && npm pack --silent "npm@${CHECK_NPM_VERSION:-11}" > npm.txt)
  tar -xzf "$ctx/$(cat "$ctx/node.txt")" -C "$ctx/node" --strip-components=1 package/bin package/include package/share
  tar -xzf "$ctx/$(cat "$ctx/npm.txt")" -C "$ctx/npm" --strip-components=1
  cp "$ROOT/bench/container/node-entrypoint.sh" "$ctx/"
  podman build -q --format docker --build-arg "BASE=$BASE_TAG" -t "$1" -f "$ROOT/bench/container/node.Containerfile" "$ctx" > "$WORK/node-build.log" 2>&1 || {
    tail -n 20 "$WORK/node-build.log"
    return 1
  }
  say "node stand-in: Node.js $(podman run --rm "$1" node --version) (node-linux-$(arch)@$version), npm $(podman run --rm "$1" npm --version)"
}

postgres_recipe() {
  podman build -q --format docker --build-arg "BASE=$BASE_TAG" -t "$1" -f "$ROOT/bench/container/postgres.Containerfile" "$ROOT/bench/container" > "$WORK/postgres-build.log" 2>&1 || {
    tail -n 20 "$WORK/postgres-build.log"
    return 1
  }
  say "postgres stand-in: $(podman run --rm --entrypoint postgres "$1" --version)"
}

nginx_recipe() {
  podman build -q --format docker --build-arg "BASE=$BASE_TAG" -t "$1" -f "$ROOT/bench/container/nginx.Containerfile" "$ROOT/bench/container" > "$WORK/nginx-build.log" 2>&1 || {
    tail -n 20 "$WORK/nginx-build.log"
    return 1
  }
  say "nginx stand-in: $(podman run --rm "$1" nginx -v 2>&1)"
}

# podman's defaults, or this check's containers.conf where they cannot start a container here.
runtime_setup() {
  local image=$1
  if probe_runtime "$image" > "$WORK/probe.log" 2>&1; then
    say "podman starts containers with its own settings"
    return
  fi
  local conf=$WORK/containers.conf nofile nproc runtime=runc
  nofile=$(ulimit -Hn)
  nproc=$(ulimit -Hu)
  [ "$nofile" = unlimited ] && nofile=1048576
  [ "$nproc" = unlimited ] && nproc=32768
  [ "$nproc" -gt 32768 ] && nproc=32768
  command -v runc > /dev/null || runtime=crun
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "%s"\n' "$nofile" "$nofile" "$nproc" "$nproc" "$runtime" > "$conf"
  export CONTAINERS_CONF=$conf
  if probe_runtime "$image" >> "$WORK/probe.log" 2>&1; then
    say "podman's defaults failed here ($(grep -m1 -o 'setrlimit[^:]*\|rlimit[^:]*' "$WORK/probe.log" || echo 'see probe.log')); using CONTAINERS_CONF=$conf: runtime $runtime, nofile $nofile, nproc $nproc"
  else
    say "podman cannot start a container here:"
    tail -n 5 "$WORK/probe.log"
    return 1
  fi
}

section "base images"
if [ "$STANDINS" = always ] || ! podman image exists docker.io/library/node:24-bookworm-slim; then build_base; fi
if podman image exists "$BASE_TAG"; then runtime_setup "$BASE_TAG"; fi
ensure_image docker.io/library/node:24-bookworm-slim node_recipe
podman image exists "$BASE_TAG" || runtime_setup docker.io/library/node:24-bookworm-slim
compose_image() { awk -v s="  $1:" '$0 == s { f = 1; next } f && /^  [a-z]/ { f = 0 } f && $1 == "image:" { print $2; exit }' "$ROOT/compose.yaml"; }
PG_IMAGE=$(compose_image postgres)
NGINX_IMAGE=$(compose_image balancer)
ensure_image "$PG_IMAGE" postgres_recipe
ensure_image "$NGINX_IMAGE" nginx_recipe

# A one-off command in the image, without its health check (which a one-off does not need, and which makes
# podman without systemd complain on every run).
img() { podman run --rm --no-healthcheck "$@"; }

# --- 1. the image ---------------------------------------------------------------------------------------

section "1. the image (Dockerfile)"
# A CA this machine's npm trusts beyond Node's own (a TLS-inspecting proxy): the Dockerfile's build secret `ca`.
ca=${CHECK_CA:-${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2> /dev/null || true)}}
build_flags=(--format docker -t "$IMAGE" -f Dockerfile)
# A real build, npm ci included, unless CHECK_CACHE=1 (quicker, when only the check itself changed).
[ "${CHECK_CACHE:-0}" = 1 ] || build_flags+=(--no-cache)
if [ -n "$ca" ] && [ "$ca" != null ] && [ -s "$ca" ]; then
  build_flags+=(--secret "id=ca,src=$ca")
  say "npm in the build trusts $ca too (build secret ca, as the Dockerfile says)"
fi
dangling() { podman images -q --no-trunc -f dangling=true | sort; }
dangling_before=$(dangling)
previous=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2> /dev/null || true)
t=$(now)
if (cd "$ROOT" && podman build "${build_flags[@]}" .) > "$WORK/image-build.log" 2>&1; then
  pass "the image builds: podman build --format docker ($(since "$t"))"
else
  fail "the image builds ($(since "$t"))" "$(cat "$WORK/image-build.log")"
  exit 1
fi
# What this build left behind (its build stage, the image it replaced), and nothing else, goes.
for id in $(comm -13 <(echo "$dangling_before") <(dangling)) $previous; do
  [ "$id" = "$(podman image inspect --format '{{.Id}}' "$IMAGE")" ] || podman rmi "$id" > /dev/null 2>&1 || true
done
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base_size=$(podman image inspect --format '{{.Size}}' docker.io/library/node:24-bookworm-slim)
NOTES+=("image: $((size / 1000000)) MB, of which $(((size - base_size) / 1000000)) MB over its base (node:24-bookworm-slim here: $((base_size / 1000000)) MB$(podman image inspect --format '{{index .Labels "org.opencontainers.image.description"}}' docker.io/library/node:24-bookworm-slim | grep -q STAND-IN && echo ', a stand-in')); /app $(img "$IMAGE" du -sh /app | cut -f1), node_modules $(img "$IMAGE" du -sh /app/node_modules | cut -f1)")
say "${NOTES[-1]}"
if img "$IMAGE" test -d /app/node_modules/node; then
  NOTES+=("note: /app/node_modules/node (the npm registry's node package) is in the image: $(img "$IMAGE" du -sh /app/node_modules/node | cut -f1), a second Node.js beside the image's own")
  say "${NOTES[-1]}"
fi
healthcheck=$(podman image inspect --format '{{json .HealthCheck}}' "$IMAGE" 2> /dev/null || true)
case $healthcheck in
  *healthz*) pass "its HEALTHCHECK is kept and asks /healthz" ;;
  *) fail "its HEALTHCHECK is kept and asks /healthz" "$healthcheck" ;;
esac
no_compiler() { ! img "$IMAGE" sh -c 'command -v python3 || command -v make || command -v g++ || command -v cc'; }
node_24() { img "$IMAGE" node --version | grep -q '^v24\.'; }
on_path() { [ "$(img "$IMAGE" sh -c 'command -v emr-bridge')" = /usr/local/bin/emr-bridge ] && img --user 4242 "$IMAGE" emr-bridge --help; }
check "no compiler in it (python3, make, g++, cc)" no_compiler
check "it runs on Node.js 24: $(img "$IMAGE" node --version)" node_24
check "emr-bridge is on its PATH, for any user (here uid 4242)" on_path

# --- 2. the demo container ------------------------------------------------------------------------------

section "2. one container, zero configuration (docs/containers.md)"
t=$(now)
podman run -d --name "$DEMO" -p 127.0.0.1::3000 -v "$DEMO_VOLUME:/data" "$IMAGE" > /dev/null 2> "$WORK/demo-run.log"
if wait_for 90 health "$DEMO"; then pass "it starts and its HEALTHCHECK passes ($(since "$t"))"; else fail "it starts and its HEALTHCHECK passes" "$(podman logs "$DEMO" 2>&1)"; fi
demo_port=$(podman port "$DEMO" 3000 | head -n 1 | sed 's/.*://')
wait_for 60 ready "$DEMO" || true
check "from the host, through its published port, /readyz answers 200 (it binds 0.0.0.0)" host_ok "http://127.0.0.1:$demo_port/readyz"
podman logs "$DEMO" > "$WORK/demo.log" 2> /dev/null
first=$(head -n 1 "$WORK/demo.log")
if [ "$first" = "listening on http://127.0.0.1:3000" ]; then pass "its first line is exactly: $first"; else fail "its first line is exactly: listening on http://127.0.0.1:3000" "$first"; fi
banner=$(grep -A2 '^  interfaces' "$WORK/demo.log" || true)
if [[ $banner == *"all (0.0.0.0)"* ]]; then
  pass "its banner says where it listens: $(head -n 1 <<< "$banner" | sed 's/^ *interfaces *//')"
  while IFS= read -r line; do say "      $line"; done <<< "$banner"
else
  fail "its banner says it listens on all interfaces" "$(head -n 12 "$WORK/demo.log")"
fi
check "it runs as user node" sh -c "[ \"\$(podman exec '$DEMO' id -un)\" = node ]"
t=$(now)
if out=$(podman exec "$DEMO" emr-bridge backup 2>&1) && backup=$(printf '%s\n' "$out" | tail -n 1) && podman exec "$DEMO" test -s "$backup"; then
  pass "docker exec <container> emr-bridge backup: $backup ($(since "$t"))"
else
  fail "docker exec <container> emr-bridge backup ($(since "$t"))" "$out"
fi
t=$(now)
if out=$(podman exec "$DEMO" emr-bridge fhir-get 'Patient?_count=1' 2>&1) && [[ $out == *'"resourceType"'* ]]; then
  pass "docker exec <container> emr-bridge fhir-get 'Patient?_count=1': $(printf '%s' "$out" | tr -d '\n ' | grep -o '"resourceType":"[A-Za-z]*"' | head -n 1) ($(since "$t"))"
else
  fail "docker exec <container> emr-bridge fhir-get ($(since "$t"))" "$out"
fi
t=$(now)
if out=$(timeout 120 podman exec "$DEMO" npx --no-install emr-bridge --help 2>&1); then
  say "info: npx emr-bridge in the image worked here ($(since "$t"))"
else
  say "info: npx emr-bridge in the image fails, as the docs now say: $(printf '%s\n' "$out" | grep -m1 -iE 'EPERM|EACCES|error' || printf '%s\n' "$out" | tail -n 1) ($(since "$t"))"
fi
t=$(now)
podman stop -t 30 "$DEMO" > /dev/null 2>&1
code=$(podman inspect --format '{{.State.ExitCode}}' "$DEMO")
if [ "$code" = 0 ]; then pass "SIGTERM (podman stop) stops it cleanly: exit 0 ($(since "$t"))"; else fail "SIGTERM stops it cleanly: exit $code" "$(podman logs --tail 10 "$DEMO" 2>&1)"; fi
t=$(now)
if out=$(img -v "$DEMO_VOLUME:/data" "$IMAGE" emr-bridge migrate 2>&1); then
  pass "docker run --rm -v …:/data <image> emr-bridge migrate: $(printf '%s\n' "$out" | tail -n 1) ($(since "$t"))"
else
  fail "docker run … emr-bridge migrate (SQLite) ($(since "$t"))" "$out"
fi
podman rm -f -v -t 0 "$DEMO" > /dev/null 2>&1
podman volume rm -f "$DEMO_VOLUME" > /dev/null

# What a Kubernetes securityContext may ask (docs/operations.md): a read-only root filesystem, /data and /tmp
# writable (tsx and Node.js keep their compile caches in /tmp).
t=$(now)
podman run -d --name "$DEMO" --read-only --read-only-tmpfs=false --tmpfs /tmp -v "$DEMO_VOLUME:/data" "$IMAGE" > /dev/null 2> "$WORK/demo-run.log"
if wait_for 90 ready "$DEMO" && podman exec "$DEMO" emr-bridge backup > /dev/null 2>&1; then
  pass "with a read-only root filesystem (/data and /tmp writable): ready, and backup works ($(since "$t"))"
else
  fail "with a read-only root filesystem (/data and /tmp writable) ($(since "$t"))" "$(podman logs --tail 15 "$DEMO" 2>&1)"
fi
podman rm -f -v -t 0 "$DEMO" > /dev/null 2>&1
podman volume rm -f "$DEMO_VOLUME" > /dev/null

# --- 3. compose.yaml ------------------------------------------------------------------------------------

section "3. compose.yaml with podman-compose (docs/replicas.md)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The operator's copy: compose.yaml and its nginx.conf as they are in the repository, its own ./secrets.
rm -rf "$WORK/compose"
mkdir -p "$WORK/compose/docs/compose"
cp "$ROOT/compose.yaml" "$WORK/compose/"
cp "$ROOT/docs/compose/nginx.conf" "$WORK/compose/docs/compose/"
secrets=$WORK/compose/secrets
mkdir -m 700 "$secrets"
rand() { python3 -c 'import secrets; print(secrets.token_hex(24))'; }
(
  umask 022
  rand > "$secrets/postgres-password"
  printf 'postgres://emr_bridge:%s@postgres:5432/emr_bridge\n' "$(cat "$secrets/postgres-password")" > "$secrets/database-url"
  rand > "$secrets/admin-token"
  rand > "$secrets/service-api-key"
  rand > "$secrets/service-signing-secrets"
)
img --user "$(id -u)" -v "$secrets:/secrets" "$IMAGE" emr-bridge keys generate --out /secrets/fhir-client-key.pem > "$WORK/jwks.json"
# The data key file that seals patient data at rest, made by the image's own command (compose reads it with DATA_KEYS_COMMAND).
img --user "$(id -u)" -v "$secrets:/secrets" "$IMAGE" emr-bridge data-keys generate --out /secrets/data-keys > /dev/null
chmod 0644 "$secrets"/*
export SERVICE_BASE_URL=https://service.invalid SERVICE_KEY_ID=check-key FHIR_BASE_URL=https://emr.invalid/fhir/R4 FHIR_CLIENT_ID=emr-bridge-check
EMR_BRIDGE_PORT=$(free_port)
EMR_BRIDGE_ADMIN_PORT=$(free_port)
export EMR_BRIDGE_PORT EMR_BRIDGE_ADMIN_PORT
say "secrets: $(cd "$secrets" && ls | tr '\n' ' ')(folder 0700, files 0644); balancer on $EMR_BRIDGE_PORT and 127.0.0.1:$EMR_BRIDGE_ADMIN_PORT"

t=$(now)
if compose up -d > "$WORK/compose-up.log" 2>&1; then pass "podman-compose up -d ($(since "$t"))"; else fail "podman-compose up -d ($(since "$t"))" "$(cat "$WORK/compose-up.log")"; fi
cname() { podman ps -a --format '{{.Names}}' | grep -E "^${PROJECT}[-_]$1[-_]1$" | head -n 1 || true; }
exited() { [ "$(podman inspect --format '{{.State.Status}}' "$1")" = exited ]; }
t=$(now)
migrate=$(cname migrate)
if [ -n "$migrate" ] && wait_for 180 exited "$migrate" && [ "$(podman inspect --format '{{.State.ExitCode}}' "$migrate")" = 0 ]; then
  pass "the migrate job exits 0: $(podman logs "$migrate" 2>&1 | grep -m1 'PostgreSQL') ($(since "$t"))"
else
  fail "the migrate job exits 0 ($(since "$t"))" "$( [ -n "$migrate" ] && podman logs "$migrate" 2>&1)"
fi
for r in replica-a replica-b; do
  t=$(now)
  c=$(cname "$r")
  if [ -n "$c" ] && wait_for 240 ready "$c"; then
    pass "$r is ready (/readyz 200; restarts before the schema was there: $(podman inspect --format '{{.RestartCount}}' "$c")) ($(since "$t"))"
  else
    fail "$r is ready ($(since "$t"))" "$( [ -n "$c" ] && podman logs --tail 15 "$c" 2>&1)"
  fi
done
t=$(now)
balancer=$(cname balancer)
if [ -n "$balancer" ] && wait_for 120 health "$balancer"; then
  pass "the balancer is healthy (restarts before the replicas' names resolved: $(podman inspect --format '{{.RestartCount}}' "$balancer")) ($(since "$t"))"
else
  fail "the balancer is healthy ($(since "$t"))" "$( [ -n "$balancer" ] && podman logs --tail 15 "$balancer" 2>&1)"
fi
check "through the balancer, from the host, /readyz answers 200" host_ok "http://127.0.0.1:$EMR_BRIDGE_PORT/readyz"
for r in replica-a replica-b; do
  c=$(cname "$r")
  check "$r is healthy (its compose healthcheck, /healthz)" health "$c"
done

# Signed webhooks as the service sends them, through the balancer: `emr-bridge replay` in a container of the
# image on the compose network, with the signing secret as a file (SERVICE_SIGNING_SECRETS_FILE).
received() { podman exec "$1" node -e "fetch('http://127.0.0.1:3001/metrics').then((r) => r.text()).then((t) => console.log(t.split('\n').filter((l) => l.startsWith('emr_bridge_webhook_events_received_total')).reduce((s, l) => s + Number(l.split(' ').pop()), 0)))"; }
t=$(now)
rounds=3
events=$(find "$ROOT/samples/events" -name '*.json' | wc -l)
replay_ok=1
for _ in $(seq "$rounds"); do
  if ! out=$(img --network "$NET" -e SERVICE_KEY_ID=check-key -e SERVICE_SIGNING_SECRETS_FILE=/run/secrets/service-signing-secrets \
    -v "$secrets/service-signing-secrets:/run/secrets/service-signing-secrets:ro" "$IMAGE" \
    emr-bridge replay samples/events --fresh-ids --to http://balancer:3000/webhooks/service 2>&1); then
    replay_ok=0
    break
  fi
done
a=$(received "$(cname replica-a)" || echo 0)
b=$(received "$(cname replica-b)" || echo 0)
if [ "$replay_ok" = 1 ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ $((a + b)) -eq $((rounds * events)) ]; then
  pass "$((rounds * events)) signed webhooks through the balancer (emr-bridge replay): replica-a took $a, replica-b $b ($(since "$t"))"
else
  fail "signed webhooks through the balancer reach both replicas: replica-a $a, replica-b $b of $((rounds * events)) ($(since "$t"))" "$out"
fi
t=$(now)
if out=$(podman exec "$(cname replica-a)" emr-bridge dead-letters list 2>&1); then
  pass "docker compose exec replica-a emr-bridge dead-letters list: the admin CLI with the replica's own settings ($(since "$t"))"
else
  fail "docker compose exec replica-a emr-bridge dead-letters list ($(since "$t"))" "$out"
fi
t=$(now)
if out=$(img --network "$NET" -e DATABASE_URL_FILE=/run/secrets/database-url -v "$secrets/database-url:/run/secrets/database-url:ro" "$IMAGE" emr-bridge migrate 2>&1); then
  pass "docker run … emr-bridge migrate against compose's PostgreSQL: $(printf '%s\n' "$out" | tail -n 1) ($(since "$t"))"
else
  fail "docker run … emr-bridge migrate against compose's PostgreSQL ($(since "$t"))" "$out"
fi

# A container of the image as it is (its own HEALTHCHECK), with the replicas' settings, beside them.
settings=$WORK/hc.env
printf '%s\n' NODE_ENV=production HOST=0.0.0.0 DATABASE_URL_FILE=/run/secrets/database-url "SERVICE_BASE_URL=$SERVICE_BASE_URL" \
  "SERVICE_KEY_ID=$SERVICE_KEY_ID" SERVICE_API_KEY_FILE=/run/secrets/service-api-key SERVICE_SIGNING_SECRETS_FILE=/run/secrets/service-signing-secrets \
  "FHIR_BASE_URL=$FHIR_BASE_URL" FHIR_AUTH=smart "FHIR_CLIENT_ID=$FHIR_CLIENT_ID" FHIR_PRIVATE_KEY_PATH=/run/secrets/fhir-client-key \
  ADMIN_TOKEN_FILE=/run/secrets/admin-token "DATA_KEYS_COMMAND=cat /run/secrets/data-keys" > "$settings"
mounts=()
for s in database-url service-api-key service-signing-secrets admin-token data-keys; do mounts+=(-v "$secrets/$s:/run/secrets/$s:ro"); done
mounts+=(-v "$secrets/fhir-client-key.pem:/run/secrets/fhir-client-key:ro")
podman run -d --name "$HC" --network "$NET" --env-file "$settings" "${mounts[@]}" "$IMAGE" > /dev/null 2> "$WORK/hc-run.log"
wait_for 120 ready "$HC" || true

t=$(now)
leaks=""
for c in $(podman ps -a --format '{{.Names}}' | grep -E "^${PROJECT}[-_]"); do
  env=$(podman inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$c")
  for s in "$secrets"/*; do
    value=$(head -n 1 "$s")
    if [ -n "$value" ] && grep -qF -- "$value" <<< "$env"; then leaks+="$c: the value of $(basename "$s")"$'\n'; fi
  done
  names=$(grep -oE '^(DATABASE_URL|SERVICE_API_KEY|SERVICE_SIGNING_SECRETS|FHIR_BEARER_TOKEN|ADMIN_TOKEN|POSTGRES_PASSWORD)=' <<< "$env" || true)
  if [ -n "$names" ]; then leaks+="$c: $(tr '\n' ' ' <<< "$names")"$'\n'; fi
done
count=$(podman ps -a --format '{{.Names}}' | grep -cE "^${PROJECT}[-_]" || true)
if [ -z "$leaks" ]; then pass "no secret in any container's environment (podman inspect of $count containers; only *_FILE paths) ($(since "$t"))"; else fail "no secret in any container's environment" "$leaks"; fi

# PostgreSQL stopped: a webhook cannot be stored (503, so the service retries), every replica turns not ready
# (/readyz 503), and by its health check (/healthz) every one stays healthy: nothing restarts them all.
section "3b. PostgreSQL stopped"
postgres=$(cname postgres)
declare -A restarts_before
for c in "$HC" "$(cname replica-a)" "$(cname replica-b)"; do restarts_before[$c]=$(podman inspect --format '{{.RestartCount}}' "$c"); done
t=$(now)
podman stop -t 10 "$postgres" > /dev/null 2>&1
say "stopped $postgres ($(since "$t"))"
for target in "$HC" replica-a replica-b; do
  t=$(now)
  if [ "$target" = "$HC" ]; then c=$HC label="a container of the image (its own HEALTHCHECK)"; else c=$(cname "$target") label=$target; fi
  out=$(img --network "$NET" -e SERVICE_KEY_ID=check-key -e SERVICE_SIGNING_SECRETS_FILE=/run/secrets/service-signing-secrets \
    -v "$secrets/service-signing-secrets:/run/secrets/service-signing-secrets:ro" "$IMAGE" \
    emr-bridge replay samples/events/01-appointment-created.json --fresh-ids --to "http://$target:3000/webhooks/service" 2>&1 || true)
  webhook=$(grep -o 'http [0-9]*, duplicate [a-z]* *MISMATCH\|http [0-9]*, duplicate [a-z]* *ok' <<< "$out" | head -n 1 | cut -d, -f1 || true)
  if [ "$webhook" = "http 503" ] && wait_for 30 not_ready "$c"; then
    ok=1
    for _ in 1 2 3 4; do
      health "$c" || ok=0
      sleep 2
    done
    if [ "$ok" = 1 ] && [ "$(podman inspect --format '{{.State.Health.Status}}' "$c")" = healthy ]; then
      pass "$label: a webhook answers 503, /readyz 503, and its health check stays healthy (4 runs in a row) ($(since "$t"))"
    else
      fail "$label: healthy while PostgreSQL is stopped ($(since "$t"))" "$(podman inspect --format '{{json .State.Health}}' "$c")"
    fi
  else
    fail "$label: a webhook answers 503 and /readyz turns 503 while PostgreSQL is stopped ($(since "$t"))" \
      "webhook: ${webhook:-none}; /readyz: $(readyz "$c"); $(podman inspect --format 'state {{.State.Status}}, restarts {{.RestartCount}}' "$c") (${restarts_before[$c]} before PostgreSQL stopped: more means the process exited during the outage)"$'\n'"$out"$'\n'"$(podman logs --tail 40 "$c" 2>&1 | grep -v '^{' | tail -n 20)"
  fi
done
exited=""
for c in "${!restarts_before[@]}"; do
  now_count=$(podman inspect --format '{{.RestartCount}}' "$c")
  [ "$now_count" = "${restarts_before[$c]}" ] || exited+="$c: restarts ${restarts_before[$c]} -> $now_count"$'\n'
done
if [ -z "$exited" ]; then pass "no emr-bridge process exited while PostgreSQL was stopped"; else fail "no emr-bridge process exited while PostgreSQL was stopped" "$exited"; fi
t=$(now)
podman start "$postgres" > /dev/null 2>&1
if wait_for 120 ready "$(cname replica-a)" && wait_for 60 ready "$(cname replica-b)" && wait_for 60 ready "$HC"; then
  pass "PostgreSQL back: every replica ready again by itself ($(since "$t"))"
else
  fail "PostgreSQL back: every replica ready again ($(since "$t"))"
fi
