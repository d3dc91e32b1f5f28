#!/usr/bin/env bash
# make postings: each posting of patches/ that has a cover letter as one
# mbox, build/postings/NAME.mbox, ready for b4 (b4 am -m, b4 send) or git
# send-email: threaded under its cover letter, From: and Signed-off-by:
# the exporter's git identity (user.name and user.email, or
# GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL), another author's patch keeping
# its From: in the body; base-commit: and, after the first posting, the
# prerequisite-patch-id: lines of the postings before it. Refuses without
# an identity or with an address no patch can come from (reserved domains:
# example, invalid, localhost, test).
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "no work tree: run 'make tree' first"
ident=$(git -C "$TOP" var GIT_AUTHOR_IDENT 2>/dev/null) ||
	die "no git identity: set user.name and user.email (git config --global) first"
ident=${ident% * *}	# without the time stamp
email=${ident##*<}
email=${email%>}
domain=${email##*@}
case ${domain,,} in
example | example.com | example.net | example.org | *.example | \
*.example.com | *.example.net | *.example.org | invalid | *.invalid | \
localhost | *.localhost | localdomain | *.localdomain | test | *.test | "")
	die "refusing to sign the postings as '$ident': $domain is a reserved domain, not a person's address" ;;
esac

out=$BUILD/postings
rm -rf "$out" && mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in $(postings); do
	cover=$TOP/patches/$name/0000-cover-letter.patch
	[ -f "$cover" ] || { log "$name: no cover letter, not posted"; continue; }
	read -r from to < <(posting_range "$name")
	cover_text "$cover" > "$tmp/cover.txt"
	git -C "$TREE" -c user.name="${ident% <*}" -c user.email="$email" \
		format-patch --stdout --cover-letter --thread=shallow --numbered \
		--signoff --from="$ident" --base=base --no-signature \
		--subject-prefix="$(subject_prefix "$(sed -n 2p "$tmp/cover.txt")")" \
		"$from..$to" > "$tmp/mbox"
	python3 - "$tmp/mbox" "$tmp/cover.txt" "$SERIES_AUTHOR_NAME <$SERIES_AUTHOR_EMAIL>" "${ident% <*}" \
		> "$out/$name.mbox" <<'PY'
import re, sys
mbox, cover, author, exporter = sys.argv[1:]
text = open(mbox).read()
# the series' own commits are the exporter's: no in-body From: for them
text = text.replace("\n\nFrom: %s\n\n" % author, "\n\n")
_, subj, blurb = open(cover).read().split("\n", 2)
text = text.replace("*** SUBJECT HERE ***", subj.split("] ", 1)[-1], 1)
text = text.replace("*** BLURB HERE ***", blurb.rstrip(), 1)
# the cover letter's shortlog: the series' own commits are the exporter's
name = author.split(" <")[0]
text = re.sub(r"^%s \((\d+)\):$" % re.escape(name), exporter + r" (\1):",
              text, count=1, flags=re.M)
# one line a subject: b4 (0.12) cannot copy a folded one
text = re.sub(r"^(Subject: .*)\n (.*)$", r"\1 \2", text, flags=re.M)
sys.stdout.write(text)
PY
	! grep -q "$SERIES_AUTHOR_EMAIL" "$out/$name.mbox" ||
		die "$name.mbox still names $SERIES_AUTHOR_EMAIL"
	log "$name: $(grep -c '^Subject: ' "$out/$name.mbox") mails in ${out#"$TOP"/}/$name.mbox, from $ident"
done
