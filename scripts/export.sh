#!/usr/bin/env bash
# Write the commits of build/linux back into patches/, posting by posting
# (see "The series" in scripts/lib.sh): patches/NAME/ gets the commits of
# its range, numbered within the posting, and its cover letter again, with
# the subject and text of the one stored there (edit that file to change
# them) and the shortlog and diffstat of the commits. The series' own
# commits are stored without From: (they are whoever exports them); a
# posting without a stored cover letter is not posted (patches/0-testbed).
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "no work tree: run 'make tree' first"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "build/linux has uncommitted changes; commit them first"
mapfile -t names < <(postings)
[ ${#names[@]} -gt 0 ] || die "no posting directory in patches/"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=0
for name in "${names[@]}"; do
	read -r from to < <(posting_range "$name")
	git -C "$TREE" merge-base --is-ancestor "$from" "$to" ||
		die "posting/$name is not an ancestor of the next posting: move the branch (git branch -f) after a rebase without updateRefs"
	cover=$TOP/patches/$name/0000-cover-letter.patch
	args=(--numbered --zero-commit --no-signature --abbrev=12)
	if [ -f "$cover" ]; then
		cover_text "$cover" > "$tmp/cover.txt"
		args+=(--cover-letter --subject-prefix="$(subject_prefix "$(sed -n 2p "$tmp/cover.txt")")")
	fi
	mkdir -p "$tmp/$name"
	git -C "$TREE" format-patch -q -o "$tmp/$name" "${args[@]}" "$from..$to"
	python3 - "$tmp/$name" "$tmp/cover.txt" "$SERIES_AUTHOR_NAME <$SERIES_AUTHOR_EMAIL>" <<'PY'
import glob, os, re, sys
out, cover, author = sys.argv[1:]
for f in sorted(glob.glob(os.path.join(out, "*.patch"))):
    text = open(f).read()
    head, sep, body = text.partition("\n\n")
    head = head.replace("From: %s\n" % author, "")
    if os.path.basename(f).startswith("0000-"):
        lines = open(cover).read().split("\n", 2)
        subj = lines[1].split("] ", 1)[-1]
        head = re.sub(r"^Date: .*$", "Date: " + lines[0], head, flags=re.M)
        head = head.replace("*** SUBJECT HERE ***", subj)
        body = body.replace("*** BLURB HERE ***", lines[2].rstrip())
    open(f, "w").write(head + sep + body)
PY
	rm -f "$TOP/patches/$name"/*.patch
	cp "$tmp/$name"/*.patch "$TOP/patches/$name/" 2>/dev/null || true
	n=$(git -C "$TREE" rev-list --count "$from..$to")
	total=$((total + n))
	log "exported $name: $n patches"
done
log "exported $total patches to patches/ (${#names[@]} postings)"
