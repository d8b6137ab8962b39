#!/usr/bin/env bash
# npm-setup.sh: installs the npm packages of the end-to-end MCP tests
# (tests/npm/package-lock.json: the official TypeScript SDK, the reference
# servers everything, filesystem and memory, the conformance suite, and on
# Linux x64 a Node 24 for it) outside the repository, in
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dsh/npm-<first 16 hex digits of the lockfile's SHA-256>
#
# with `npm ci`, and prints that folder on standard output; `make test`
# points DSH_MCP_SERVERS and DSH_MCP_CONFORMANCE at it. It prints one line on
# standard error saying what it did. When the folder is already there it
# does nothing else (a new lockfile gets a new folder, and the older npm-*
# folders are removed once it is installed). Without npm, with
# DSH_NPM_SETUP=0, or when the install fails, it says why, prints no folder
# and exits 0: the tests that need the packages then skip, each with its
# reason. An install goes to a temporary folder renamed into place when
# complete, so an interrupted one is never taken for a finished one.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'npm-setup: %s\n' "$*" >&2; }
skip="the end-to-end MCP tests that need npm packages will skip"

if [ "${DSH_NPM_SETUP:-1}" = 0 ]; then
	say "DSH_NPM_SETUP=0: installing nothing; $skip"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	say "npm not found on PATH: $skip (install Node.js 20 or later to run them)"
	exit 0
fi

manifest=tests/npm
if command -v sha256sum >/dev/null 2>&1; then
	sum=$(sha256sum "$manifest/package-lock.json")
else
	sum=$(shasum -a 256 "$manifest/package-lock.json")
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dsh"
dir="$cache/npm-${sum:0:16}"

if [ -d "$dir/node_modules" ]; then
	say "using $dir (installed before)"
	printf '%s\n' "$dir"
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.npm-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "$manifest/package.json" "$manifest/package-lock.json" "$tmp/"
start=$SECONDS
if ! (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error) >"$tmp/npm.log" 2>&1; then
	# npm's first message line, without its code/syscall/errno lines
	# and stack: "FetchError: request to ... failed, reason: ...".
	reason=$(sed -n 's/^npm error //p' "$tmp/npm.log" | grep -Ev '^(code|syscall|errno) |^[[:space:]]' | head -n 1 | cut -c 1-300)
	say "npm ci of $manifest/package-lock.json failed: ${reason:-no message, see the log in ~/.npm/_logs}; $skip"
	exit 0
fi
rm -f "$tmp/npm.log"
if [ -e "$dir" ]; then
	# Another run installed the same lockfile meanwhile: use its folder.
	say "using $dir (installed meanwhile by another run)"
else
	mv "$tmp" "$dir"
	trap - EXIT
	for old in "$cache"/npm-*; do
		if [ "$old" != "$dir" ] && [ -d "$old" ]; then rm -rf "$old"; fi
	done
	say "installed $manifest/package-lock.json in $dir ($((SECONDS - start)) s)"
fi
printf '%s\n' "$dir"
