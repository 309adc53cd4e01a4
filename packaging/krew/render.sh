#!/bin/bash
# render.sh - fills packaging/krew/ebsmigrate.yaml for one release.
#   packaging/krew/render.sh VERSION RELEASE_URL HOMEPAGE ARCHIVE_DIR > ebsmigrate.yaml
# ARCHIVE_DIR holds ebsmigrate-vVERSION-linux-amd64.tar.gz and -linux-arm64.tar.gz (see
# docs/plugin.md for how they are made); each one's sha256 goes into the manifest. Fails when an
# archive is missing or a placeholder is left over.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 VERSION RELEASE_URL HOMEPAGE ARCHIVE_DIR" >&2; exit 2; }
version=${1#v} url=${2%/} homepage=$3 dir=$4
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || { echo "error: version '$version' is not semantic (X.Y.Z)" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
args=(-e "s|{{VERSION}}|$version|g" -e "s|{{RELEASE_URL}}|$url|g" -e "s|{{HOMEPAGE}}|$homepage|g")
for arch in amd64 arm64; do
	archive="$dir/ebsmigrate-v$version-linux-$arch.tar.gz"
	[ -f "$archive" ] || { echo "error: '$archive' is missing" >&2; exit 1; }
	sum=$(sha256sum "$archive" | cut -d' ' -f1)
	args+=(-e "s|{{SHA256_LINUX_${arch^^}}}|$sum|g")
done
out=$(sed "${args[@]}" "$here/ebsmigrate.yaml")
if grep -q '{{' <<< "$out"; then
	echo "error: placeholders left: $(grep -o '{{[A-Z0-9_]*}}' <<< "$out" | sort -u | tr '\n' ' ')" >&2
	exit 1
fi
printf '%s\n' "$out"
