#!/usr/bin/env bash
# set-version.sh X.Y.Z — point action.yml, the docs and the examples at release
# X.Y.Z, which must be CHANGELOG.md's newest release heading (the one source of
# the version). The release workflow runs it on the tag and fails when it
# changes anything: the tagged action.yml must already run the tag's image.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-}"
version="${version#v}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "usage: hack/set-version.sh X.Y.Z (a semantic version, got '${1:-}')" >&2
  exit 2
fi

newest=$(sed -n 's/^## \[\([0-9][^]]*\)\].*/\1/p' CHANGELOG.md | head -n1)
if [ "$newest" != "$version" ]; then
  echo "CHANGELOG.md's newest release is '${newest:-none}', not $version: add a '## [$version] - YYYY-MM-DD' section above it first" >&2
  exit 1
fi

# The action runs the published image of this release.
sed -i -E "s#^(  image: )'?docker://ghcr\.io/khook/khook:[^' ]*'?#\1docker://ghcr.io/khook/khook:v$version#" action.yml
grep -q "^  image: docker://ghcr.io/khook/khook:v$version\$" action.yml || {
  echo "action.yml has no 'image: docker://ghcr.io/khook/khook:...' line under runs: to rewrite" >&2
  exit 1
}

# Docs and examples name the same release (CHANGELOG.md keeps its history).
# Only full versions: a moving major tag (`@v1`, `:v1-gitlab`) stays as it is.
files=$(git ls-files -- '*.md' 'docs/*' 'examples/*' 'templates/*' | grep -v '^CHANGELOG.md$' || true)
for f in $files; do
  sed -i -E \
    -e "s#khook/khook@v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?#khook/khook@v$version#g" \
    -e "s#khook/khook/khook@[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?#khook/khook/khook@$version#g" \
    -e "s#ghcr\.io/khook/khook:v[0-9]+\.[0-9]+\.[0-9]+#ghcr.io/khook/khook:v$version#g" \
    -e "s#releases/download/v[0-9]+(\.[0-9]+){2}/#releases/download/v$version/#g" \
    -e "s#khook_[0-9]+(\.[0-9]+){2}_#khook_${version}_#g" \
    "$f"
done
