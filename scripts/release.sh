#!/usr/bin/env bash
# release.sh VERSION [OUTDIR]: cross-compiles every harness executable (the
# list: scripts/programs.sh) for each release platform, static (CGO off),
# -trimpath, VERSION stamped, and packs one archive per platform into OUTDIR
# (default dist/): harness-VERSION-OS-ARCH.tar.gz (.zip for Windows) holding
# bin/, the skill, LICENSE and README.md; then OUTDIR/SHA256SUMS. Archives are
# reproducible: fixed file order, owner and modification time.
set -euo pipefail
[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: scripts/release.sh VERSION [OUTDIR]" >&2; exit 2; }
version=$1
cd "$(dirname "$0")/.."
. scripts/programs.sh
out=$(mkdir -p "${2:-dist}" && cd "${2:-dist}" && pwd)
platforms="${HARNESS_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"
stage=$(mktemp -d "${TMPDIR:-/tmp}/harness-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
export CGO_ENABLED=0 SOURCE_DATE_EPOCH=0
for platform in $platforms; do
	goos=${platform%/*} goarch=${platform#*/}
	name=harness-$version-$goos-$goarch
	dir=$stage/$name
	mkdir -p "$dir/bin"
	ext=""
	[ "$goos" != windows ] || ext=.exe
	for p in $programs; do
		GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
			-ldflags "-s -w -buildid= -X github.com/harness-agent/harness/internal/cli.Version=$version" \
			-o "$dir/bin/$p$ext" "./hooks/${p#harness-}"
	done
	cp -R skill "$dir/skill"
	cp LICENSE README.md "$dir/"
	find "$dir" -exec touch -h -d @0 {} +
	if [ "$goos" = windows ]; then
		rm -f "$out/$name.zip"
		(cd "$stage" && find "$name" -print | LC_ALL=C sort | zip -X -q -@ "$out/$name.zip")
	else
		tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
	fi
	echo "packed $name"
done
(cd "$out" && find . -maxdepth 1 -name "harness-$version-*" \( -name '*.tar.gz' -o -name '*.zip' \) -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
echo "release $version in $out"
