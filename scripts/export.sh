#!/usr/bin/env bash
# Write the commits of build/linux (base..HEAD) back into patches/, numbered,
# with a cover letter generated from the branch description
# (edit it with: git -C build/linux branch --edit-description).
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "no work tree: run 'make tree' first"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "build/linux has uncommitted changes; commit them first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$(git -C "$TREE" rev-list --count base..HEAD)
if [ "$n" -gt 0 ]; then
	git -C "$TREE" format-patch -q -o "$tmp" --numbered --cover-letter \
		--cover-from-description=subject --zero-commit --no-signature base..HEAD
fi
rm -f "$TOP"/patches/*.patch
mkdir -p "$TOP/patches"
cp "$tmp"/*.patch "$TOP/patches/" 2>/dev/null || true
log "exported $n patches to patches/"
