#!/bin/sh
# Runs a Steward entry point (`npm start`, `npm run serve`, the systemd unit) under the V8 heap bound
# its settings ask for (STEWARD_HEAP_MB, src/runtime/heap-bound.ts). V8 sizes its heap only as Node
# starts, so the bound is flags of the command line; exec leaves no launcher process behind.
flags=$(node "$(dirname "$0")/../dist/src/heap-flags.js") || exit
exec node $flags "$@"
