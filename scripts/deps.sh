#!/usr/bin/env bash
# Install the Debian packages the testbed needs, only those missing. With
# GUEST_ARCH=arm64 (make test-arm64) also the cross compiler, QEMU for
# arm64, the arm64 libraries the guest programs link statically, and
# Debian's arm64 busybox-static and e2fsck-static unpacked into
# build/arm64-root (they cannot be installed beside the host's).
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
# busybox-static and e2fsck-static for the arm64 guest (apt-get download)
GUEST_DEBS=(busybox-static:arm64 e2fsck-static:arm64)
if [ "$GUEST_ARCH" = arm64 ]; then
	PACKAGES+=(
		gcc-aarch64-linux-gnu libc6-dev-arm64-cross	# kernel and guest programs
		qemu-system-arm			# qemu-system-aarch64 (TCG, MTE)
		libnuma-dev:arm64 liburing-dev:arm64	# as above, for the arm64 guest
	)
fi

# check-series: the sparc64 cross compiler
[ -z "${DEPS_SPARC64:-}" ] || PACKAGES+=(gcc-sparc64-linux-gnu)

as_root() { [ "$(id -u)" -eq 0 ] || die "$* (run as root, or install them)"; }

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	as_root "missing packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if [ "$GUEST_ARCH" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "adding the arm64 architecture to dpkg"
		dpkg --add-architecture arm64
	fi
	log "installing: ${missing[*]}"
	apt-get update -qq || die "apt-get update failed; is a Debian mirror reachable?"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		die "could not install: ${missing[*]}"
fi

if [ "$GUEST_ARCH" = arm64 ] &&
   { [ ! -x "$GUEST_ROOT/bin/busybox" ] || [ ! -x "$GUEST_ROOT/sbin/e2fsck.static" ]; }; then
	log "unpacking ${GUEST_DEBS[*]} into ${GUEST_ROOT#"$TOP"/}"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt's _apt user downloads into it
	(cd "$tmp" && apt-get download -qq "${GUEST_DEBS[@]}") ||
		{ rm -rf "$tmp"; die "apt-get download ${GUEST_DEBS[*]} failed"; }
	rm -rf "$GUEST_ROOT" && mkdir -p "$GUEST_ROOT"
	for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$GUEST_ROOT"; done
	rm -rf "$tmp"
	[ -x "$GUEST_ROOT/bin/busybox" ] && [ -x "$GUEST_ROOT/sbin/e2fsck.static" ] ||
		die "no bin/busybox or sbin/e2fsck.static in ${GUEST_DEBS[*]}"
fi
exit 0
