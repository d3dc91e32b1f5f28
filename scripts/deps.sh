#!/usr/bin/env bash
# Install the Debian packages the testbed needs, only those missing.
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	"$KERNEL_PACKAGE"		# the base kernel source
	build-essential bc bison flex libelf-dev libssl-dev kmod cpio
	rsync xz-utils zstd		# kernel build
	git				# work tree and series
	qemu-system-x86			# the guest (TCG)
	busybox-static			# guest userland
	libnuma-dev			# migbench and the selftests (static)
	liburing-dev			# selftests cow, gup_longterm: io_uring cases (static)
	e2fsprogs			# ext4 image for page-cache tests
	e2fsck-static			# fsck inside the guest (test 18)
	python3-matplotlib		# bench plot
	python3-ply			# checkpatch.pl's SPDX check
)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]} (run as root, or install them)"
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || die "apt-get update failed; is a Debian mirror reachable?"
apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
	die "could not install: ${missing[*]}"
