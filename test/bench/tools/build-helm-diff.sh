#!/bin/sh
# Builds the helm-diff plugin from a local checkout of its repository at the
# pinned tag and installs it as a Helm plugin directory (plugin.yaml + bin/diff)
# under OUT. helm-diff is not on the Go module proxy, so it is built from git;
# its source is never vendored into khook.
#
#   test/bench/tools/build-helm-diff.sh /path/to/helm-diff [OUT]
#
# SRC is a clone (or a bare git dir) of github.com/databus23/helm-diff. OUT
# defaults to the directory the benchmark reads (HELM_PLUGINS points at it).
set -eu

HELM_DIFF_VERSION=v3.15.11
HELM_DIFF_COMMIT=d01cb21d1bd4c102e8eeaa69d456af9934739d84

src=${1:?usage: build-helm-diff.sh HELM_DIFF_CHECKOUT [OUT]}
cache=${XDG_CACHE_HOME:-$HOME/.cache}
out=${2:-$cache/khook/bench-bin/helm-plugins-diff-$HELM_DIFF_VERSION-$(go env GOOS)-$(go env GOARCH)}

got=$(git -C "$src" rev-parse "$HELM_DIFF_VERSION^{commit}" 2>/dev/null) || {
	echo "build-helm-diff: $src has no tag $HELM_DIFF_VERSION: clone github.com/databus23/helm-diff (or git fetch --tags) first" >&2
	exit 1
}
if [ "$got" != "$HELM_DIFF_COMMIT" ]; then
	echo "build-helm-diff: tag $HELM_DIFF_VERSION in $src is $got, not the pinned $HELM_DIFF_COMMIT: the tag moved; check it before updating the pin" >&2
	exit 1
fi

# An exported tree of the tagged commit: works from a bare mirror too and
# leaves the checkout's own work tree alone.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$src" archive "$HELM_DIFF_COMMIT" | tar -x -C "$work"

mkdir -p "$out/diff/bin"
version=$(sed -n -e 's/^version:[ "]*\([^"]*\).*/\1/p' "$work/plugin.yaml")
(cd "$work" && GOFLAGS=-mod=mod GOTOOLCHAIN=auto go build -o "$out/diff/bin/diff" \
	-ldflags "-X github.com/databus23/helm-diff/v3/cmd.Version=$version" .)
cp "$work/plugin.yaml" "$out/diff/plugin.yaml"
echo "helm-diff $HELM_DIFF_VERSION: HELM_PLUGINS=$out"
