# scripts/lib.sh - shared by scripts/demo and scripts/test: install missing Debian packages,
# configure and build. Sourced, not run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${EM_BUILD_DIR:-$ROOT/build}

# Packages: compiler and build tools, the libraries we link, and the reference clients and
# tools the tests use (Debian AWS CLI v2, botocore for the simulator, fio, jq, sqlite3, openssl;
# zsh, fish, groff and man-db check the generated completions and man pages; python3-sarif-python-om
# is the SARIF object model check --sarif reports are validated against; python3-prometheus-client
# and prometheus (promtool) parse `metrics` output; libmicrohttpd serves `metrics --listen`;
# clang-format (with git's git-clang-format) is scripts/checksrc's format check of changed lines).
EM_BUILD_PACKAGES=(gcc make cmake pkg-config libcurl4-openssl-dev libssl-dev libcjson-dev
	libyaml-dev libsqlite3-dev libexpat1-dev zlib1g-dev libmicrohttpd-dev)
EM_TEST_PACKAGES=(python3 python3-botocore awscli fio jq sqlite3 openssl ca-certificates chromium
	zsh fish groff-base man-db python3-yaml python3-sarif-python-om python3-prometheus-client prometheus curl
	clang-format)

em_missing_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	echo "${missing[@]:-}"
}

em_install() {
	local missing
	missing=$(em_missing_packages "$@")
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "error: missing Debian packages: $missing" >&2
		echo "install them with:  sudo apt-get update && sudo apt-get install -y $missing" >&2
		exit 1
	fi
	echo "installing: $missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2
}

em_build() { # em_build BUILD_DIR [cmake args...]
	local dir=$1
	shift
	cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
	cmake --build "$dir" -j"$(nproc)"
}
