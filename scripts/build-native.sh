#!/bin/bash
# Compiles the addons of native/ (rename-exchange.c: exchanges two files' names; checked-writes.c:
# sums and writes an upload's pieces off the event loop; fd-duplicate.c: a descriptor of an upload's
# socket for the thread that reads it) against the headers of the Node.js that
# runs Steward, into native/build; each again only when its source or that Node.js changes.
# `npm run build:native` and scripts/setup.sh run it.
set -euo pipefail
cd "$(dirname "$0")/.."
headers=$(node -p "require('path').join(process.execPath, '..', '..', 'include', 'node')")
mkdir -p native/build
build() {
  local name=$1 libraries=$2
  local addon=native/build/$name.node stamp
  stamp=$({ sha256sum "native/$name.c"; node --version; } | sha256sum | cut -d' ' -f1)
  if [ -f "$addon" ] && [ "$(cat "native/build/.steward-build-$name" 2>/dev/null)" = "$stamp" ]; then
    return
  fi
  echo "setup: building the native addon $name" >&2
  # shellcheck disable=SC2086 # the libraries are words
  cc -O2 -Wall -Wextra -Werror -shared -fPIC -I"$headers" -o "$addon" "native/$name.c" $libraries
  echo "$stamp" > "native/build/.steward-build-$name"
}
build rename-exchange ''
build checked-writes -lz
build fd-duplicate ''
