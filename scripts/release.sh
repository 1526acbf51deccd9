#!/usr/bin/env bash
# release.sh VERSION [--commit] — prepare release VERSION (vX.Y.Z) of every module.
#
# Writes each module's released go.mod and go.sum (a versioned require on every
# sibling module it imports, no replace, tidied outside the workspace against a
# file-based proxy of the staged siblings) into a staging directory, and prints
# the tags to create (nested-module scheme: sdk/vX.Y.Z, pm-cargo/vX.Y.Z, ...).
# With --commit it also records them, without touching the working tree or the
# current branch: a commit on branch release/VERSION whose parent is HEAD, holding
# the released go.mod and go.sum files, and the tags on that commit. It never
# pushes. See RELEASING.md.
#
# Environment: STAGE (default: a new directory under $TMPDIR), ALLOW_DIRTY=1 to
# prepare from a working tree with uncommitted changes (never with --commit).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/release.sh vX.Y.Z [--commit]" >&2; exit 2; }
[ $# -ge 1 ] || usage
version=$1; shift
commit=false
for a in "$@"; do
  case $a in
    --commit) commit=true ;;
    *) usage ;;
  esac
done
case $version in v[0-9]*) ;; *) echo "release: version $version must look like v0.1.0" >&2; exit 2 ;; esac

cd "$top"
if [ -n "$(git status --porcelain)" ]; then
  if $commit || [ "${ALLOW_DIRTY:-}" != 1 ]; then
    echo "release: the working tree has uncommitted changes; commit them first (or set ALLOW_DIRTY=1 for a dry run)" >&2
    exit 1
  fi
  echo "release: dry run from a working tree with uncommitted changes" >&2
fi
if $commit; then
  if git rev-parse -q --verify "refs/heads/release/$version" >/dev/null; then
    echo "release: branch release/$version exists already" >&2; exit 1
  fi
  for d in */go.mod; do
    t="$(dirname "$d")/$version"
    if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then
      echo "release: tag $t exists already" >&2; exit 1
    fi
  done
fi

stage=${STAGE:-$(mktemp -d "${TMPDIR:-/tmp}/symposium-release-$version.XXXXXX")}
echo "release: staging $version in $stage" >&2
# The tool lives in the sdk module (it uses sdk/internal/modproxy); it prints one
# "TAG DIR" line per module, in release order.
plan=$(cd sdk && GOWORK=off go run ./internal/cmd/release -root "$top" -stage "$stage" "$version")

echo
echo "Released go.mod changes (staged in $stage):"
while read -r tag dir; do
  echo "--- $dir"
  changes=$(diff -u "$dir/go.mod" "$stage/$dir/go.mod" | sed -n '3,$p' | grep '^[-+]' || true)
  echo "${changes:-(go.mod unchanged)}"
done <<<"$plan"

if ! $commit; then
  echo
  echo "Tags to create, in this order, on a commit holding the staged go.mod and go.sum files:"
  while read -r tag dir; do echo "  $tag"; done <<<"$plan"
  echo
  echo "Re-run with --commit to record branch release/$version and the tags locally."
  exit 0
fi

# A commit of HEAD's tree with the staged go.mod and go.sum files, built in a
# private index: the working tree, the real index and the current branch stay.
index=$(mktemp "${TMPDIR:-/tmp}/symposium-release-index.XXXXXX")
trap 'rm -f "$index"' EXIT
export GIT_INDEX_FILE=$index
git read-tree HEAD
while read -r tag dir; do
  for f in go.mod go.sum; do
    [ -f "$stage/$dir/$f" ] || continue
    blob=$(git hash-object -w "$stage/$dir/$f")
    git update-index --add --cacheinfo "100644,$blob,$dir/$f"
  done
done <<<"$plan"
tree=$(git write-tree)
unset GIT_INDEX_FILE
rev=$(git commit-tree "$tree" -p HEAD -m "release $version: versioned requires between modules

Tags: $(echo "$plan" | cut -d' ' -f1 | tr '\n' ' ')")
git branch "release/$version" "$rev"
while read -r tag dir; do
  git tag -a "$tag" -m "$dir $version" "$rev"
done <<<"$plan"
echo
echo "Recorded branch release/$version ($rev) and tags:"
while read -r tag dir; do echo "  $tag"; done <<<"$plan"
echo
echo "Check, then publish (the sdk tag first, or all at once):"
echo "  git push origin release/$version $(echo "$plan" | cut -d' ' -f1 | tr '\n' ' ')"
