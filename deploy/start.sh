#!/bin/sh
# The README's start (and `pnpm start`): build what is stale, then become the service. `exec` replaces this shell with
# Node, so what stays running is the service's one process: no npx, pnpm or shell beside it holding memory, and
# Ctrl-C and SIGTERM reach the service itself. deploy/current.mjs checks the build in plain JavaScript (0.1-0.2 s);
# only when something changed does the TypeScript build run. The Node flags: a stated heap (docs/decisions.md,
# "Settings and start-up"), no source maps (docs/decisions.md, "Build and a light start").
set -e
cd "$(dirname "$0")/.."
node deploy/current.mjs || node --import tsx deploy/build.ts
exec node --max-semi-space-size=4 --max-old-space-size=512 dist/embedded.js
