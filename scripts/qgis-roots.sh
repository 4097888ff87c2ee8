#!/usr/bin/env bash
# Makes the Debian trixie roots holding the other QGIS Server versions the tests run against:
#   trixie-3.40  trixie's qgis-server, python3-qgis and mapproxy
#   trixie-3.44  the same with qgis-server and python3-qgis from trixie-backports
# in $STEWARD_ROOTS (default /var/lib/steward/roots). A root is made once: its stamp file records
# what it was made with, and a root whose stamp is missing (an interrupted run) is made anew.
#   scripts/qgis-roots.sh [3.40|3.44]...   (no argument: both)
set -euo pipefail
cd "$(dirname "$0")/.."

ROOTS=${STEWARD_ROOTS:-/var/lib/steward/roots}
SUITE=trixie
ROOT_PACKAGES=(qgis-server python3-qgis mapproxy python3-gdal fonts-dejavu-core fontconfig locales)

say() { printf 'qgis-roots: %s\n' "$*" >&2; }

# The Debian mirror this machine's apt uses (deb822 .sources or one-line sources.list), never a
# host written here: the first archive that is not the security one.
mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' | grep -v -- '-security' | head -n1 || true)
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; break } }' \
      /etc/apt/sources.list | grep -v -- '-security' | head -n1 || true)
  fi
  [ -n "$uri" ] || { say "no Debian mirror in /etc/apt/sources.list(.d)"; exit 1; }
  echo "${uri%/}"
}

stamp_of() { echo "$SUITE ${ROOT_PACKAGES[*]} backports=$1"; }

in_root() { scripts/in-root.sh "$1" -- "${@:2}"; }

make_root() {
  local version=$1 dir="$ROOTS/trixie-$1" backports=no
  [ "$version" = 3.44 ] && backports=yes
  if [ -f "$dir/.steward-root" ] && [ "$(cat "$dir/.steward-root")" = "$(stamp_of $backports)" ]; then
    return
  fi
  local url
  url=$(mirror)
  say "making the QGIS Server $version root in $dir (a few minutes, about 2 GB)"
  # An interrupted debootstrap may leave /proc or /sys mounted in the root: never delete through them.
  findmnt -rn -o TARGET | { grep "^$dir/" || true; } | sort -r | xargs -r umount -l
  rm -rf --one-file-system "$dir"
  mkdir -p "$ROOTS"
  debootstrap --variant=minbase "$SUITE" "$dir" "$url" >"$ROOTS/trixie-$version.log" 2>&1 \
    || { tail -n 20 "$ROOTS/trixie-$version.log" >&2; exit 1; }
  {
    echo "deb $url $SUITE main"
    echo "deb $url $SUITE-updates main"
    [ $backports = yes ] && echo "deb $url $SUITE-backports main"
  } >"$dir/etc/apt/sources.list"
  echo 'APT::Install-Recommends "false";' >"$dir/etc/apt/apt.conf.d/90steward"
  in_root "$dir" apt-get update -q >>"$ROOTS/trixie-$version.log" 2>&1
  local target=()
  [ $backports = yes ] && target=(-t "$SUITE-backports")
  DEBIAN_FRONTEND=noninteractive in_root "$dir" apt-get install -y -q "${target[@]}" \
    "${ROOT_PACKAGES[@]}" >>"$ROOTS/trixie-$version.log" 2>&1 \
    || { tail -n 20 "$ROOTS/trixie-$version.log" >&2; exit 1; }
  in_root "$dir" apt-get clean
  in_root "$dir" qgis_mapserver --version 2>/dev/null | grep -q "QGIS $version" \
    || { say "the $version root holds another QGIS: $(in_root "$dir" qgis_mapserver --version 2>&1 | head -n1)"; exit 1; }
  stamp_of $backports >"$dir/.steward-root"
}

versions=("$@")
[ ${#versions[@]} -eq 0 ] && versions=(3.40 3.44)
for version in "${versions[@]}"; do
  make_root "$version"
done
