#!/usr/bin/env bash
# Build the guest initramfs for one kernel: scripts/initramfs.sh VARIANT PROFILE
# Contents: busybox-static, guest/init, the static test programs and test
# modules of guest/, upstream selftests built from the same kernel source,
# and the kernel's modules.
# The per-boot job script is appended by scripts/run-guest.sh.
. "$(dirname "$0")/lib.sh"

variant=${1:?variant}
profile=${2:?profile}
src=$(variant_src "$variant")
out=$(kernel_out "$variant" "$profile")
stage=$out/initramfs
bin=$stage/opt/mig/bin

[ -x /bin/busybox ] || die "/bin/busybox missing (apt-get install busybox-static)"

# Our own programs, built next to the kernel: git worktrees of this
# repository share build/, and make's timestamps cannot tell their sources apart.
make -s -C "$TOP/guest" OUT="$out/guest"
# Test modules, out of tree; copied (timestamps kept) so that their objects
# stay out of the source tree.
kmod=$out/guest-kmod
mkdir -p "$kmod"
cp -p "$TOP"/guest/kmod/Kbuild "$TOP"/guest/kmod/*.c "$kmod/"
make -s -C "$out" M="$kmod" modules

# Upstream selftests, compiled against this kernel's own UAPI headers.
make -s -C "$src" O="$out" headers >/dev/null
sel=$src/tools/testing/selftests
mkdir -p "$out/selftests"
build_selftest() {	# name, sources...
	local name=$1; shift
	local dst=$out/selftests/$name
	local srcs=("${@/#/$sel/mm/}")
	if [ ! -x "$dst" ] || [ -n "$(find "${srcs[@]}" -newer "$dst")" ]; then
		rm -f "$dst"
		gcc -O2 -static -D_GNU_SOURCE -isystem "$out/usr/include" -I "$sel" -I "$sel/mm" \
			-o "$dst" "${srcs[@]}" -lnuma -lpthread -lm 2>&1 |
			grep -v -e 'statically linked' -e 'in function .affinity_ip' >&2 || true
		[ -x "$dst" ] || die "cannot build selftest $name"
	fi
}
build_selftest migration migration.c vm_util.c thp_settings.c
build_selftest compaction_test compaction_test.c
build_selftest hugetlb-soft-offline hugetlb-soft-offline.c

rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,proc,sys,dev,tmp,mnt,lib/modules} "$bin" "$stage/opt/mig/tests"
cp /bin/busybox "$stage/bin/busybox"
install -m 755 "$TOP/guest/init" "$stage/init"
cp "$out"/guest/* "$out"/selftests/* "$bin/"
mkdir -p "$stage/opt/mig/kmod"
cp "$kmod"/*.ko "$stage/opt/mig/kmod/"
cp /sbin/e2fsck.static "$bin/"	# static: the guest has no shared libc
install -m 644 "$TOP"/guest/tests/*.sh "$TOP"/guest/tests/settings "$stage/opt/mig/tests/"
install -m 755 "$TOP/guest/bench.sh" "$stage/opt/mig/bench.sh"
install -m 755 "$TOP/guest/bench-host-check.sh" "$stage/opt/mig/bench-host-check.sh"
[ -d "$out/mods/lib/modules" ] && cp -a "$out"/mods/lib/modules/* "$stage/lib/modules/"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.cpio.gz"
