#!/usr/bin/env bash
# Installs everything Steward needs on a fresh Debian machine, then builds. Idempotent: each step
# is skipped when its result is already there, so `npm start` and `npm test` can call it every time.
# With --qgis-roots (as `npm test` runs it) it also makes the Debian trixie roots holding QGIS Server
# 3.40 and 3.44 that the version-dependent tests run against (scripts/qgis-roots.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
  qgis-server python3-qgis gdal-bin libgdal-dev python3-gdal python3-numpy
  mapproxy python3-boto3 postgresql postgresql-15-postgis-3 sqlite3 build-essential zlib1g-dev python3
  chromium fonts-dejavu-core fontconfig prometheus nginx spawn-fcgi gunicorn gettext-base debootstrap valgrind patch
)

say() { printf 'setup: %s\n' "$*" >&2; }

missing_debian_packages() {
  local package
  for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || echo "$package"
  done
}

install_debian_packages() {
  local missing
  missing=$(missing_debian_packages)
  [ -z "$missing" ] && return
  say "installing Debian packages: $(echo $missing)"
  local sudo=''
  [ "$(id -u)" -ne 0 ] && sudo='sudo'
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
}

# ruff lints and formats the plugin's Python (npm run lint). Debian 12 has no package of it; pip
# installs it from the configured index (a Debian python3 needs --break-system-packages for that).
install_ruff() {
  command -v ruff >/dev/null && return
  say "installing ruff"
  python3 -m pip install --quiet ruff 2>/dev/null || python3 -m pip install --quiet --break-system-packages ruff
}

build() {
  say "building"
  npx tsc -p tsconfig.build.json
}

# The web console is built again only when its sources or the installed packages change.
web_stamp() {
  { find web -path web/dist -prune -o -type f -print0 | sort -z | xargs -0 sha256sum; cat node_modules/.steward-setup; } \
    | sha256sum | cut -d' ' -f1
}

build_web() {
  local stamp
  stamp=$(web_stamp)
  if [ -f web/dist/.steward-build ] && [ "$(cat web/dist/.steward-build)" = "$stamp" ]; then
    return
  fi
  say "building the web console"
  npx vite build --config web/vite.config.ts --logLevel warn
  echo "$stamp" > web/dist/.steward-build
}

# The demo dataset `npm start` offers in data/demo, generated (never downloaded) by demo-data.py.
demo_data() {
  [ -f data/demo/town.gpkg ] && [ -f data/demo/elevation.tif ] && return
  say "writing the demo dataset into data/demo"
  /usr/bin/python3 scripts/demo-data.py data/demo
}

install_debian_packages
install_ruff
if [ "${1:-}" = --qgis-roots ]; then scripts/qgis-roots.sh; fi
bash scripts/install-packages.sh
demo_data
bash scripts/build-native.sh
build
build_web
