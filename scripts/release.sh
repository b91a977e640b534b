#!/usr/bin/env bash
# release.sh VERSION [OUTDIR]: cross-compiles every harness executable (the
# list: scripts/programs.sh) for each release platform, static (CGO off),
# -trimpath, VERSION stamped, and packs one archive per platform into OUTDIR
# (default dist/): harness-VERSION-OS-ARCH.tar.gz (.zip for Windows) holding
# bin/, the skill, LICENSE and README.md; then OUTDIR/SHA256SUMS. Archives are
# reproducible: fixed file order, owner and modification time.
#
# With npm on PATH it also packs the npm packages into OUTDIR/npm/ (npm
# pack): one per platform, @harness-agent/OS-ARCH (node's names: linux,
# darwin, win32; x64, arm64), holding bin/ and selected by its "os" and
# "cpu"; and @harness-agent/harness, whose `harness` command (a small node
# script) runs the platform's executable, found among its
# optionalDependencies. No install script, no download. Not published.
set -euo pipefail
[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: scripts/release.sh VERSION [OUTDIR]" >&2; exit 2; }
version=$1
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
. scripts/programs.sh
out=$(mkdir -p "${2:-dist}" && cd "${2:-dist}" && pwd)
platforms="${HARNESS_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"
stage=$(mktemp -d "${TMPDIR:-/tmp}/harness-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
export CGO_ENABLED=0 SOURCE_DATE_EPOCH=0
use_go_collector

# The npm packages' version: VERSION when it is semver (a leading v
# dropped), else 0.0.0-VERSION.
npm_version=${version#v}
if ! printf '%s' "$npm_version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'; then
	npm_version=0.0.0-$(printf '%s' "$version" | tr -c '0-9A-Za-z.\n-' '-')
fi
npm_platforms=""
pkgs=()
for p in $programs; do
	pkgs+=("./hooks/${p#harness-}")
done

# npm_pkg GOOS GOARCH BINDIR stages the platform package for GOOS/GOARCH.
npm_name() {
	local os=$1 cpu=$2
	[ "$os" != windows ] || os=win32
	[ "$cpu" != amd64 ] || cpu=x64
	echo "$os-$cpu"
}
npm_pkg() {
	local os=$1 cpu=$2 name
	[ "$os" != windows ] || os=win32
	[ "$cpu" != amd64 ] || cpu=x64
	name=$os-$cpu
	mkdir -p "$stage/npm/$name"
	cp -R "$3" "$stage/npm/$name/bin"
	cat >"$stage/npm/$name/package.json" <<JSON
{
  "name": "@harness-agent/$name",
  "version": "$npm_version",
  "description": "The harness executables for $name (used by @harness-agent/harness).",
  "license": "MIT",
  "repository": "github:harness-agent/harness",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/"],
  "preferUnplugged": true
}
JSON
}

# pack PLATFORM builds and packs one platform. The platforms are packed
# side by side, as many at once as there are cores: linking and
# compressing take most of a release's time, and each archive is made
# alone (same bytes whatever the order).
pack() {
	local platform=$1 goos goarch name dir ext
	goos=${platform%/*} goarch=${platform#*/}
	name=harness-$version-$goos-$goarch
	dir=$stage/$name
	mkdir -p "$dir/bin"
	ext=""
	[ "$goos" != windows ] || ext=.exe
	# One go build for all of them (packages loaded once, links in
	# parallel); each comes out named after its directory and takes its
	# own name after.
	GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
		-ldflags "-s -w -buildid= -X github.com/harness-agent/harness/internal/cli.Version=$version -X github.com/harness-agent/harness/internal/cli.Commit=$commit" \
		-o "$dir/bin/" "${pkgs[@]}"
	for p in $programs; do
		[ "$p" = harness ] || mv "$dir/bin/${p#harness-}$ext" "$dir/bin/$p$ext"
	done
	npm_pkg "$goos" "$goarch" "$dir/bin"
	cp -R skill "$dir/skill"
	cp LICENSE README.md "$dir/"
	find "$dir" -exec touch -h -d @0 {} +
	if [ "$goos" = windows ]; then
		rm -f "$out/$name.zip"
		(cd "$stage" && find "$name" -print | LC_ALL=C sort | zip -X -q -@ "$out/$name.zip")
	else
		# gzip -6: a third of -9's CPU for archives 0.7% larger.
		tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$name" | gzip -n -6 >"$out/$name.tar.gz"
	fi
	echo "packed $name"
}

jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
failed=0
pids=()
# finish waits for the platforms being packed (each exits non-zero on any
# failure: set -e holds in a background job).
finish() {
	local pid
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=1
	done
	pids=()
}
for platform in $platforms; do
	npm_platforms="$npm_platforms $(npm_name "${platform%/*}" "${platform#*/}")"
	[ "${#pids[@]}" -lt "$jobs" ] || finish
	pack "$platform" &
	pids+=($!)
done
finish
[ "$failed" = 0 ] || { echo "release: packing a platform failed" >&2; exit 1; }
(cd "$out" && find . -maxdepth 1 -name "harness-$version-*" \( -name '*.tar.gz' -o -name '*.zip' \) -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)

if command -v npm >/dev/null 2>&1; then
	main=$stage/npm/harness
	mkdir -p "$main/bin"
	cp scripts/npm/harness.js "$main/bin/harness.js"
	chmod 0755 "$main/bin/harness.js"
	cp LICENSE README.md "$main/"
	deps=""
	for name in $npm_platforms; do
		deps="$deps${deps:+,}
    \"@harness-agent/$name\": \"$npm_version\""
	done
	cat >"$main/package.json" <<JSON
{
  "name": "@harness-agent/harness",
  "version": "$npm_version",
  "description": "Keeps one long job on track across many Claude Code sessions: hooks, the harness command and the /harness skill. npx @harness-agent/harness install",
  "license": "MIT",
  "repository": "github:harness-agent/harness",
  "bin": { "harness": "bin/harness.js" },
  "files": ["bin/", "README.md", "LICENSE"],
  "engines": { "node": ">=18" },
  "optionalDependencies": {$deps
  }
}
JSON
	mkdir -p "$out/npm"
	# npm pack costs seconds each, most of it node starting: side by
	# side, as many at once as there are cores.
	for d in "$stage"/npm/*/; do
		[ "${#pids[@]}" -lt "$jobs" ] || finish
		(cd "$out/npm" && npm pack --silent "$d" >/dev/null) &
		pids+=($!)
	done
	finish
	[ "$failed" = 0 ] || { echo "release: npm pack failed" >&2; exit 1; }
	echo "npm packages in $out/npm: $(cd "$out/npm" && ls | tr '\n' ' ')"
else
	echo "release: npm not found: no npm packages packed"
fi
echo "release $version in $out"
