#!/usr/bin/env bash
# Create the kernel work tree build/linux: the pristine source as one commit
# (tag "base") plus each patch of patches/ as its own commit, posting after
# posting (see "The series" in scripts/lib.sh). Also creates build/vanilla,
# a worktree of the same repository checked out at "base".
#
#   scripts/tree.sh          create if missing, else report whether it matches patches/
#   FORCE=1 scripts/tree.sh  move an existing tree aside and recreate it
#   scripts/tree.sh nometa   (after the above) build/nometa: a worktree of
#                            build/linux's HEAD with the metadata rule
#                            reverted (the commits that add or use
#                            arch_folio_has_metadata, and the migrators'
#                            copies_arch_metadata lines),
#                            the kernel that MTE's test 12 must fail on
#                            (make test-arm64 VARIANT=nometa); made again
#                            when build/linux's HEAD moves
. "$(dirname "$0")/lib.sh"

# The series as a list of changed lines, independent of hashes and dates,
# so that the tree and patches/ can be compared.
fingerprint() {
	grep -h -E '^[+-]' "$@" 2>/dev/null | grep -v -E '^(\+\+\+|---)( |$)' | md5sum | cut -d' ' -f1
}
series_files() { local p; for p in $(postings); do posting_files "$p"; done; }

tree_matches_patches() {
	local tmp a b
	tmp=$(mktemp -d)
	git -C "$TREE" format-patch -q --no-signature -o "$tmp" base..HEAD
	a=$(fingerprint "$tmp"/*.patch /dev/null)
	mapfile -t files < <(series_files)
	b=$(fingerprint "${files[@]}" /dev/null)
	rm -rf "$tmp"
	[ "$a" = "$b" ]
}

# Debian's source ships a .gitignore that ignores everything at the top
# level ("/*"), which would hide every file a patch adds. Drop that rule in
# the work tree only, and tell git not to record the edit.
unhide_new_files() {
	sed -i -e '/^# Debian packaging/,/^!\/debian\/$/d' .gitignore
	git update-index --skip-worktree .gitignore
}

create_tree() {
	local tmp=$BUILD/linux.tmp found
	[ -f "$KERNEL_TARBALL" ] || die "$KERNEL_TARBALL not found (apt-get install $KERNEL_PACKAGE)"
	rm -rf "$tmp" && mkdir -p "$tmp"
	log "extracting $KERNEL_TARBALL"
	tar -xf "$KERNEL_TARBALL" -C "$tmp" --strip-components=1
	found=$(make -s -C "$tmp" kernelversion)
	[ "$found" = "$KERNEL_VERSION" ] ||
		warn "installed source is $found, config/kernel.env expects $KERNEL_VERSION; trying the series anyway"

	# Fixed identity and dates make the "base" commit identical on every machine.
	log "committing pristine $found as tag base"
	(
		cd "$tmp"
		export GIT_AUTHOR_NAME=testbed GIT_AUTHOR_EMAIL=testbed@localhost
		export GIT_COMMITTER_NAME=testbed GIT_COMMITTER_EMAIL=testbed@localhost
		export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
		git init -q -b main
		git add -A -f .
		git commit -q -m "Linux $found ($KERNEL_PACKAGE, pristine)"
		git tag base
		unhide_new_files
	)

	# Commits made in the work tree are the series' own (SERIES_AUTHOR),
	# whatever machine this runs on; a rebase moves the posting branches.
	git -C "$tmp" config user.name "$SERIES_AUTHOR_NAME"
	git -C "$tmp" config user.email "$SERIES_AUTHOR_EMAIL"
	git -C "$tmp" config rebase.updateRefs true
	local name names files
	mapfile -t names < <(postings)
	for name in "${names[@]}"; do
		mapfile -t files < <(posting_files "$name")
		[ ${#files[@]} -gt 0 ] || die "patches/$name has no patch"
		log "applying $name: ${#files[@]} patches"
		with_author "$BUILD/am" "${files[@]}"
		if ! git -C "$tmp" am -q "$BUILD"/am/*.patch; then
			git -C "$tmp" am --abort || true
			rm -rf "$tmp"
			die "patches/$name does not apply on $found (series made for $KERNEL_VERSION)"
		fi
		[ "$name" = "${names[-1]}" ] || git -C "$tmp" branch "posting/$name"
	done
	rm -rf "$BUILD/am"
	mv "$tmp" "$TREE"
}

# with_author DIR PATCH...: copies of the patches in DIR, the series' own
# (no From:, see scripts/export.sh) made SERIES_AUTHOR's for git am
with_author() {
	local dir=$1 p
	shift
	rm -rf "$dir" && mkdir -p "$dir"
	for p in "$@"; do
		awk -v from="From: $SERIES_AUTHOR_NAME <$SERIES_AUTHOR_EMAIL>" '
			!hdr && /^From: / { hdr = 1 }
			!hdr && /^(Date|Subject): / { print from; hdr = 1 }
			{ print }' "$p" > "$dir/$(basename "$p")"
	done
}

# build/nometa: HEAD of the work tree without the metadata rule.
create_nometa() {
	local head commits
	head=$(git -C "$TREE" rev-parse HEAD)
	[ "$(cat "$BUILD/nometa.of" 2>/dev/null)" != "$head" ] || [ ! -d "$NOMETA" ] || return 0
	# the commits of the rule and its arch hooks; the migrators that
	# declare the flag only lose that line
	mapfile -t commits < <(git -C "$TREE" log --format=%H \
		-G 'arch_folio_has_metadata' base..HEAD -- mm arch include)
	[ ${#commits[@]} -gt 0 ] || die "no commit of the metadata rule in build/linux"
	log "build/nometa: build/linux without $(git -C "$TREE" log --no-walk --format='"%s"' "${commits[@]}" | paste -sd,)"
	git -C "$TREE" worktree remove --force "$NOMETA" 2>/dev/null || rm -rf "$NOMETA"
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$NOMETA" "$head"
	export GIT_AUTHOR_NAME=testbed GIT_AUTHOR_EMAIL=testbed@localhost
	export GIT_COMMITTER_NAME=testbed GIT_COMMITTER_EMAIL=testbed@localhost
	git -C "$NOMETA" revert --no-edit "${commits[@]}" > /dev/null ||
		die "the metadata rule does not revert cleanly"
	git -C "$NOMETA" grep -l 'copies_arch_metadata' -- '*.c' | while read -r f; do
		sed -i '/\.copies_arch_metadata[[:space:]]*= true,/d' "$NOMETA/$f"
	done
	! git -C "$NOMETA" grep -q 'copies_arch_metadata' -- '*.c' '*.h' ||
		die "build/nometa still uses copies_arch_metadata"
	git -C "$NOMETA" commit -q -a -m "nometa: no migrator declares copies_arch_metadata"
	echo "$head" > "$BUILD/nometa.of"
}

mkdir -p "$BUILD"
if [ "${1:-}" = nometa ]; then
	[ -d "$TREE/.git" ] || die "no work tree: run 'make tree' first"
	create_nometa
	exit 0
fi
[ -z "${1:-}" ] || die "usage: $0 [nometa]"
if [ -d "$TREE/.git" ] && [ -n "${FORCE:-}" ]; then
	old=$TREE.old-$(date +%Y%m%d-%H%M%S)
	log "moving the existing tree to $old"
	git -C "$TREE" worktree remove --force "$VANILLA" 2>/dev/null || rm -rf "$VANILLA"
	mv "$TREE" "$old"
fi

if [ -d "$TREE/.git" ]; then
	tree_matches_patches ||
		warn "build/linux differs from patches/: run 'make export' to keep your commits, or 'make tree FORCE=1' to rebuild it from patches/"
else
	create_tree
fi

if [ ! -d "$VANILLA" ]; then
	git -C "$TREE" worktree prune
	git -C "$TREE" worktree add -q --detach "$VANILLA" base
fi
