#!/bin/sh
# Builds the QGIS Desktop plugin's zip from desktop/steward_publish, as QGIS's plugin manager
# installs it ("Install from ZIP"): the folder at the zip's root, without Python's caches.
# usage: npm run build:desktop-plugin [-- OUT.zip]   (default dist/steward_publish.zip)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-dist/steward_publish.zip}
case $out in /*) ;; *) out="$PWD/$out" ;; esac
mkdir -p "$(dirname "$out")"
rm -f "$out"
cd "$root/desktop"
zip -q -r -X "$out" steward_publish -x '*__pycache__*' '*.pyc'
echo "$out"
