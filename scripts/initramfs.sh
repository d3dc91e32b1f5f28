#!/usr/bin/env bash
# Build the guest initramfs for one kernel: scripts/initramfs.sh VARIANT PROFILE
# Contents: busybox-static, guest/init, the static test programs and test
# modules of guest/, upstream selftests built from the same kernel source,
# and the kernel's modules; for GUEST_ARCH (arm64: cross-compiled, Debian's
# arm64 busybox-static and e2fsck-static from build/arm64-root).
# The per-boot job script is appended by scripts/run-guest.sh.
. "$(dirname "$0")/lib.sh"

variant=${1:?variant}
profile=${2:?profile}
src=$(variant_src "$variant")
out=$(kernel_out "$variant" "$profile")
stage=$out/initramfs
bin=$stage/opt/mig/bin

busybox=${GUEST_ROOT:-}/bin/busybox e2fsck=${GUEST_ROOT:-}/sbin/e2fsck.static
[ -x "$busybox" ] || die "$busybox missing (scripts/deps.sh installs it)"
[ -x "$e2fsck" ] || die "$e2fsck missing (scripts/deps.sh installs it)"

# Our own programs, built next to the kernel: git worktrees of this
# repository share build/, and make's timestamps cannot tell their sources apart.
# They use this kernel's selftests/mm/vm_util.c and thp_settings.c.
make -s -C "$TOP/guest" OUT="$out/guest" CC="$GUEST_CC" KSRC="$src"
# Test modules, out of tree; copied (timestamps kept) so that their objects
# stay out of the source tree.
kmod=$out/guest-kmod
mkdir -p "$kmod"
cp -p "$TOP"/guest/kmod/Kbuild "$TOP"/guest/kmod/*.c "$kmod/"
"${KMAKE[@]}" -s -C "$out" M="$kmod" modules

# Upstream selftests, compiled against this kernel's own UAPI headers.
"${KMAKE[@]}" -s -C "$src" O="$out" headers >/dev/null
sel=$src/tools/testing/selftests
mkdir -p "$out/selftests" "$out/selftests-include"
# What the selftests' check_config.sh would write: liburing is there
# (deps.sh installs liburing-dev) for cow's and gup_longterm's io_uring cases.
echo '#define LOCAL_CONFIG_HAVE_LIBURING 1' > "$out/selftests-include/local_config.h"
# Flags as selftests/lib.mk and mm/Makefile give them (-I of the source
# tree for <mm/gup_test.h>); -static: the guest has no shared libc. The
# selftests name files after __FILE__ (gup_longterm's local tmpfile,
# pagemap_ioctl's): relative, as make in selftests/mm gives it, so that they
# land in the current directory.
build_selftest() {	# name, sources in selftests/mm/... [-lLIB...]
	local name=$1 a srcs=() libs=()
	local dst=$out/selftests/$name
	shift
	for a; do
		case $a in -l*) libs+=("$a") ;; *) srcs+=("$sel/mm/$a") ;; esac
	done
	if [ ! -x "$dst" ] || [ -n "$(find "${srcs[@]}" -newer "$dst")" ]; then
		rm -f "$dst"
		"$GUEST_CC" -O2 -static -D_GNU_SOURCE= -U_FORTIFY_SOURCE -fmacro-prefix-map="$sel/mm/=" \
			-isystem "$out/usr/include" \
			-I "$out/selftests-include" -I "$src" -I "$sel" -I "$sel/mm" \
			-o "$dst" "${srcs[@]}" "${libs[@]}" -lnuma -lpthread -lm -lrt 2>&1 |
			grep -v -e 'statically linked' -e 'in function .affinity_ip' >&2 || true
		[ -x "$dst" ] || die "cannot build selftest $name"
	fi
}
util=(vm_util.c thp_settings.c)
build_selftest migration migration.c "${util[@]}"
# The series' own kselftest: not in the vanilla tree
[ ! -f "$sel/mm/migrate_copy.c" ] || build_selftest migrate_copy migrate_copy.c "${util[@]}"
build_selftest hugetlb-soft-offline hugetlb-soft-offline.c
# Test 71: selftests whose state a migration must preserve
build_selftest cow cow.c "${util[@]}" -luring
build_selftest gup_longterm gup_longterm.c "${util[@]}" -luring
build_selftest gup_test gup_test.c "${util[@]}"
build_selftest ksm_functional_tests ksm_functional_tests.c "${util[@]}"	# not run yet: see test 71
build_selftest hugetlb-madvise hugetlb-madvise.c "${util[@]}"
build_selftest hugetlb_dio hugetlb_dio.c "${util[@]}"
build_selftest mlock2-tests mlock2-tests.c "${util[@]}"
build_selftest madv_populate madv_populate.c "${util[@]}"
build_selftest pagemap_ioctl pagemap_ioctl.c "${util[@]}"
build_selftest mkdirty mkdirty.c "${util[@]}"
build_selftest split_huge_page_test split_huge_page_test.c "${util[@]}"	# not run: see test 71
build_selftest transhuge-stress transhuge-stress.c "${util[@]}"
build_selftest uffd-unit-tests uffd-unit-tests.c uffd-common.c "${util[@]}"

rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,proc,sys,dev,tmp,mnt,lib/modules} "$bin" "$stage/opt/mig/tests"
cp "$busybox" "$stage/bin/busybox"
install -m 755 "$TOP/guest/init" "$stage/init"
cp "$out"/guest/* "$out"/selftests/* "$bin/"
mkdir -p "$stage/opt/mig/kmod"
cp "$kmod"/*.ko "$stage/opt/mig/kmod/"
cp "$e2fsck" "$bin/"	# static: the guest has no shared libc
install -m 644 "$TOP"/guest/tests/*.sh "$TOP"/guest/tests/settings "$stage/opt/mig/tests/"
install -m 755 "$TOP/guest/bench.sh" "$stage/opt/mig/bench.sh"
install -m 755 "$TOP/guest/bench-host-check.sh" "$stage/opt/mig/bench-host-check.sh"
if [ -d "$out/mods/lib/modules" ]; then
	cp -a "$out"/mods/lib/modules/* "$stage/lib/modules/"
	# the test modules for modprobe too (swdma: dcbm's tests load it so)
	ver=$(ls "$out/mods/lib/modules")
	mkdir -p "$stage/lib/modules/$ver/extra"
	cp "$kmod"/*.ko "$stage/lib/modules/$ver/extra/"
	depmod -b "$stage" "$ver"
fi
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.cpio.gz"
