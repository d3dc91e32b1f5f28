# Entry points of the testbed; the work is done by scripts/ (see README.md).
.PHONY: test test-full test-arm64 mutate bench tree export postings check-series deps clean help

help:
	@echo "make test       build the patched kernel (debug), boot it, run the quick tests; arm64 smoke"
	@echo "make test-full  the same with every test (three boots, about 80 minutes)"
	@echo "make test-arm64 arm64 guests (MTE), 4K and 64K base pages (see docs/arm64.md)"
	@echo "make mutate     the catching tests against each deliberate bug of scripts/mutants/ (M=NAME: one)"
	@echo "make bench      vanilla vs patched move_pages() benchmark -> results/"
	@echo "make tree       create the kernel work tree build/linux from patches/"
	@echo "make export     write build/linux's commits back into patches/"
	@echo "make postings   one mbox per posting, signed off by your git identity -> build/postings/"
	@echo "make check-series  checkpatch and build each patch alone; =n, i386, arm64"
	@echo "make deps       install the Debian packages the testbed needs"
	@echo "make clean      remove the kernels' builds, the guest programs and results/"

test:
	@scripts/test.sh quick

test-full:
	@scripts/test.sh full

# Both arm64 kernels, each in its own boot and results/arm64-PAGE/; both
# run, and the target fails if either does. GUEST_PAGE=4k or 64k: one only.
test-arm64:
	@rc=0; for p in $(or $(GUEST_PAGE),4k 64k); do \
		GUEST_ARCH=arm64 GUEST_PAGE=$$p scripts/test.sh arm64 || rc=1; \
	done; exit $$rc

# Each mutant of scripts/mutants/ (M="NAME ...": those only; M=baseline:
# their tests without a mutant) applied, built, booted with its tests,
# caught or escaped; the tree restored. Not part of make test (time).
# M must not reach the kernel's make, where it names an external module.
mutate:
	@env -u M -u MAKEFLAGS -u MFLAGS scripts/mutate.sh $(M)

bench:
	@scripts/bench.sh

tree: deps
	@scripts/tree.sh

export:
	@scripts/export.sh

postings:
	@scripts/postings.sh

# POSTING=NAME: the patches of patches/NAME only
check-series: deps
	@env -u MAKEFLAGS -u MFLAGS scripts/check-series.sh $(POSTING)

deps:
	@scripts/deps.sh

clean:
	rm -rf build/out build/out-arm64-* build/guest results
