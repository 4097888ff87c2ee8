#!/bin/bash
# Compiles the addon that exchanges two files' names (native/rename-exchange.c) against the headers
# of the Node.js that runs Steward, into native/build; again only when its source or that Node.js
# changes. `npm run build:native` and scripts/setup.sh run it.
set -euo pipefail
cd "$(dirname "$0")/.."
addon=native/build/rename-exchange.node
stamp=$({ sha256sum native/rename-exchange.c; node --version; } | sha256sum | cut -d' ' -f1)
if [ -f "$addon" ] && [ "$(cat native/build/.steward-build 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
echo "setup: building the native addon" >&2
mkdir -p native/build
cc -O2 -Wall -Wextra -Werror -shared -fPIC \
  -I"$(node -p "require('path').join(process.execPath, '..', '..', 'include', 'node')")" \
  -o "$addon" native/rename-exchange.c
echo "$stamp" > native/build/.steward-build
