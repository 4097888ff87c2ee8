#!/usr/bin/env bash
# Runs a command inside a Debian root (made by scripts/qgis-roots.sh) in a private mount namespace:
#   scripts/in-root.sh ROOT [--bind DIR]... -- COMMAND [ARG]...
# /proc, /dev and /tmp are bound at their own paths, and so are the repository and each --bind
# folder, so paths given to the command mean the same inside and outside the root.
set -euo pipefail
root=$1
shift
binds=(/tmp /run/postgresql "$(cd "$(dirname "$0")/.." && pwd)")
while [ "${1:-}" = --bind ]; do
  binds+=("$2")
  shift 2
done
[ "${1:-}" = -- ] && shift
[ -x "$root/bin/sh" ] || { echo "in-root: $root is not a Debian root" >&2; exit 2; }

# The namespace's mounts vanish with it; nothing is left mounted in the root afterwards.
exec unshare --mount --propagation private -- /bin/bash -euc '
  root=$1; shift
  count=$1; shift
  mount --rbind /proc "$root/proc"
  mount --rbind /dev "$root/dev"
  while [ "$count" -gt 0 ]; do
    dir=$1; shift; count=$((count - 1))
    [ -d "$dir" ] || continue
    mkdir -p "$root$dir"
    mount --rbind "$dir" "$root$dir"
  done
  cd_to=$PWD
  exec chroot "$root" /bin/sh -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$cd_to" "$@"
' in-root "$root" "${#binds[@]}" "${binds[@]}" "$@"
