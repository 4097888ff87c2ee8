#!/usr/bin/env bash
# Installs the npm packages from package-lock.json with the fixes of patches/ applied before
# anything is built, and gdal-async built from source against Debian's libgdal (libgdal-dev).
# patches/<package>/*.patch are applied with `patch -p1` inside node_modules/<package>; a patch
# that no longer applies stops the install. Skipped when node_modules was installed from this very
# lock file and these patches.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'install-packages: %s\n' "$*" >&2; }

stamp() { cat package-lock.json patches/*/*.patch | sha256sum | cut -d' ' -f1; }

apply_patches() {
  local folder package file
  for folder in patches/*/; do
    package=$(basename "$folder")
    for file in "$folder"*.patch; do
      say "patching $package: $(basename "$file")"
      patch -p1 --forward --batch --quiet -d "node_modules/$package" < "$file"
    done
  done
}

if [ -f node_modules/.steward-setup ] && [ "$(cat node_modules/.steward-setup)" = "$(stamp)" ]; then
  exit 0
fi
say "installing npm packages (gdal-async is built against Debian's libgdal)"
rm -f node_modules/.steward-setup
# Nothing is built until the patches are in: install scripts run afterwards, through rebuild.
npm ci --ignore-scripts --no-audit --no-fund
apply_patches
npm_config_build_from_source=true npm_config_shared_gdal=true npm rebuild
node -e "const gdal = require('gdal-async'); if (gdal.bundled) { throw new Error('gdal-async uses its bundled GDAL'); }"
stamp > node_modules/.steward-setup
