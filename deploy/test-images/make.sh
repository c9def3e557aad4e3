#!/usr/bin/env bash
# The tested path of the deployment: a container engine, Compose v2 and local base images on a registry-less Debian
# 12 machine (root), so test/compose.test.ts runs deploy/docker-compose.yml and deploy/Dockerfile as they are, with
# only the base images swapped (NATS_IMAGE, POSTGRES_IMAGE, REDIS_IMAGE, NODE_IMAGE, DEBIAN_IMAGE = local/*:ci).
#   - engine: Debian's docker.io; Compose v2: Debian 13's docker-compose package (depends on libc6 only), fetched
#     through a throw-away apt configuration so the system's sources stay as they are;
#   - NATS, PostgreSQL, Redis: Debian's packages in one debootstrap root, imported three times, each with a small
#     entrypoint that honours what compose passes (the official images' contracts); the same root, with Debian's
#     PgBouncer in it, is local/debian:ci, the base deploy/pgbouncer/Dockerfile builds on (it then installs nothing);
#   - Node: the npm registry's node@<version> binary (the Dockerfile's NODE_IMAGE version) with corepack, plus this
#     machine's CA certificates, so the image build reaches the npm registry through this machine's proxy.
# Idempotent: what exists is kept. Prints each step's time. Usage: bash deploy/test-images/make.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
W=${VCS_IMAGES_DIR:-/var/tmp/vcs-test-images}
mkdir -p "$W"
step() { local s=$SECONDS; "$@"; echo "test-images: $* ($((SECONDS - s)) s)" >&2; }
MIRROR=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
NODE_VERSION=$(sed -n 's/^ARG NODE_IMAGE=node:\([0-9.]*\)-.*/\1/p' "$root/deploy/Dockerfile")

install_engine() {
  command -v dockerd >/dev/null && command -v debootstrap >/dev/null && return 0
  apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null; }
}

install_compose_v2() {
  docker compose version >/dev/null 2>&1 && return 0
  local A="-o Dir::Etc::sourcelist=$W/alt/sources.list -o Dir::Etc::sourceparts=/nonexistent -o Dir::State::Lists=$W/alt/lists -o Dir::Cache=$W/alt/cache"
  mkdir -p "$W/alt/lists/partial" "$W/alt/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" > "$W/alt/sources.list"
  apt-get $A update -qq >/dev/null
  (cd "$W/alt" && apt-get $A download docker-compose >/dev/null)
  dpkg -i "$W"/alt/docker-compose_*_amd64.deb >/dev/null
}

start_engine() {
  docker info >/dev/null 2>&1 && return 0
  setsid dockerd --data-root="$W/docker" > "$W/dockerd.log" 2>&1 < /dev/null &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "test-images: dockerd did not start; see $W/dockerd.log" >&2; return 1
}

servers_root() {
  [ -f "$W/rootfs/.done" ] && [ -x "$W/rootfs/usr/sbin/pgbouncer" ] && return 0
  rm -rf "$W/rootfs"
  debootstrap --variant=minbase --include=ca-certificates,wget,procps,postgresql-15,redis-server,nats-server,pgbouncer \
    bookworm "$W/rootfs" "$MIRROR" >/dev/null
  rm -rf "$W/rootfs/var/cache/apt/archives/"*.deb "$W/rootfs/var/lib/apt/lists/"*
  mkdir -p "$W/rootfs/data"
  touch "$W/rootfs/.done"
}

node_root() {
  [ -f "$W/rootfs-node/.done-$NODE_VERSION" ] && return 0
  rm -rf "$W/rootfs-node" "$W/npm" && mkdir -p "$W/npm"
  cp -a "$W/rootfs" "$W/rootfs-node"
  (cd "$W/npm" && npm install --no-save --no-audit --no-fund --ignore-scripts=false "node@$NODE_VERSION" >/dev/null 2>&1 && npm pack corepack@0.34.0 >/dev/null 2>&1)
  cp "$(readlink -f "$W/npm/node_modules/node/bin/node")" "$W/rootfs-node/usr/local/bin/node"
  mkdir -p "$W/rootfs-node/usr/local/lib/node_modules/corepack"
  tar -xzf "$W"/npm/corepack-*.tgz -C "$W/rootfs-node/usr/local/lib/node_modules/corepack" --strip-components=1
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$W/rootfs-node/usr/local/bin/corepack"
  cp /usr/local/share/ca-certificates/*.crt "$W/rootfs-node/usr/local/share/ca-certificates/" 2>/dev/null || true
  chroot "$W/rootfs-node" sh -c 'update-ca-certificates >/dev/null 2>&1; id node >/dev/null 2>&1 || useradd -m -u 1000 node'
  touch "$W/rootfs-node/.done-$NODE_VERSION"
}

import_images() {
  local base='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  # The entrypoints are this repository's: an image is made again when they change (its label is their checksum).
  cp "$here/postgres-entrypoint.sh" "$here/redis-entrypoint.sh" "$W/rootfs/usr/local/bin/"
  local sum; sum=$(cat "$here"/*-entrypoint.sh | sha256sum | cut -c1-16)
  current() { fresh "$1" && [ "$(docker image inspect -f '{{index .Config.Labels "vcs.entrypoints"}}' "$1" 2>/dev/null)" = "$sum" ]; }
  # The root's own age, so an image made from an older root (before PgBouncer was in it) is made again.
  local made; made=$(stat -c %Y "$W/rootfs/.done")
  fresh() { [ "$(docker image inspect -f '{{index .Config.Labels "vcs.root"}}' "$1" 2>/dev/null)" = "$made" ]; }
  fresh local/nats:ci \
    || tar -C "$W/rootfs" -c . | docker import --change "$base" --change "LABEL vcs.root=$made" --change 'ENTRYPOINT ["nats-server"]' - local/nats:ci >/dev/null
  fresh local/debian:ci \
    || tar -C "$W/rootfs" -c . | docker import --change "$base" --change "LABEL vcs.root=$made" - local/debian:ci >/dev/null
  current local/redis:ci \
    || tar -C "$W/rootfs" -c . | docker import --change "$base" --change "LABEL vcs.entrypoints=$sum" --change "LABEL vcs.root=$made" --change 'ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]' --change 'CMD ["redis-server"]' - local/redis:ci >/dev/null
  current local/postgres:ci \
    || tar -C "$W/rootfs" -c . | docker import --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
         --change "LABEL vcs.entrypoints=$sum" --change "LABEL vcs.root=$made" --change 'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]' - local/postgres:ci >/dev/null
  # This machine's registry mirror serves no npm signatures, so corepack cannot verify pnpm's here: the test image
  # (only it) turns the check off; the Dockerfile, and an operator's official node image, keep it on.
  docker image inspect "local/node:ci" >/dev/null 2>&1 && docker run --rm local/node:ci node --version | grep -qx "v$NODE_VERSION" \
    || tar -C "$W/rootfs-node" -c . | docker import --change "$base" --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
         --change 'ENV COREPACK_INTEGRITY_KEYS=0' - local/node:ci >/dev/null
}

step install_engine
step install_compose_v2
step start_engine
step servers_root
step node_root
step import_images
echo "test-images: ready (engine $(docker version -f '{{.Server.Version}}'), $(docker compose version --short 2>/dev/null || true), node $NODE_VERSION)" >&2
