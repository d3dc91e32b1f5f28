# Entry points of the testbed; the work is done by scripts/ (see README.md).
.PHONY: test test-full bench tree export deps kernel clean help

help:
	@echo "make test       build the patched kernel (debug), boot it, run the quick tests"
	@echo "make test-full  the same with every test (three boots, about 80 minutes)"
	@echo "make bench      vanilla vs patched move_pages() benchmark -> results/"
	@echo "make tree       create the kernel work tree build/linux from patches/"
	@echo "make export     write build/linux's commits back into patches/"
	@echo "make deps       install the Debian packages the testbed needs"

test:
	@scripts/test.sh quick

test-full:
	@scripts/test.sh full

bench:
	@scripts/bench.sh

tree: deps
	@scripts/tree.sh

export:
	@scripts/export.sh

deps:
	@scripts/deps.sh

clean:
	rm -rf build/out build/guest results
