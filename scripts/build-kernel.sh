#!/usr/bin/env bash
# Build one kernel: scripts/build-kernel.sh VARIANT PROFILE
#   VARIANT  patched (build/linux) | vanilla (build/vanilla, tag base) |
#            nometa (build/nometa: the series without the metadata rule)
#   PROFILE  debug (make test) | bench (make bench)
# For the architecture GUEST_ARCH (x86_64, or arm64 with GUEST_PAGE 4k or
# 64k: cross-compiled). Config: tinyconfig + config/base.config +
# config/ARCH.config (+ config/arm64-PAGE.config) + config/PROFILE.config
# (+ config/ARCH-PROFILE.config if there is one) (+ config/series.config,
# and config/series-PROFILE.config if there is one, for the patched
# kernels). Output in build/out/VARIANT-PROFILE (x86_64) or
# build/out-arm64-PAGE/VARIANT-PROFILE, modules installed under its mods/.
# Incremental: the config is regenerated only when a fragment changes.
. "$(dirname "$0")/lib.sh"

variant=${1:?variant}
profile=${2:?profile}
src=$(variant_src "$variant")
out=$(kernel_out "$variant" "$profile")
[ -f "$TOP/config/$profile.config" ] || die "unknown profile '$profile'"
[ -d "$src" ] || die "$src missing: run 'make tree'"

frags=("$TOP/config/base.config")
for f in "${ARCH_FRAGS[@]}"; do frags+=("$TOP/config/$f.config"); done
frags+=("$TOP/config/$profile.config")
[ ! -f "$TOP/config/${ARCH_FRAGS[0]}-$profile.config" ] ||
	frags+=("$TOP/config/${ARCH_FRAGS[0]}-$profile.config")
[ "$variant" = vanilla ] || frags+=("$TOP/config/series.config")
[ "$variant" = vanilla ] || [ ! -f "$TOP/config/series-$profile.config" ] ||
	frags+=("$TOP/config/series-$profile.config")

# Every option a fragment sets must survive olddefconfig, or the kernel
# is not the one we think we test.
check_config() {
	local bad=0 line sym want
	while read -r line; do
		case $line in
		CONFIG_*=*) sym=${line%%=*} want=$line ;;
		"# CONFIG_"*" is not set") sym=${line#\# } sym=${sym%% *} want="" ;;
		*) continue ;;
		esac
		if [ -n "$want" ]; then
			grep -qx "$want" "$out/.config" || { warn "$want not in .config"; bad=1; }
		else
			! grep -q "^$sym=" "$out/.config" || { warn "$sym should be unset"; bad=1; }
		fi
	done < <(cat "${frags[@]}")
	return $bad
}

stamp=$(cat "${frags[@]}" | md5sum | cut -d' ' -f1)
mkdir -p "$out"
# Reconfigure when a fragment changed, or when .config no longer has what
# the fragments ask for (a Kconfig change in the tree can drop options).
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.fragments" 2>/dev/null)" != "$stamp" ] ||
   ! check_config 2>/dev/null; then
	log "configuring $variant-$profile"
	"${KMAKE[@]}" -s -C "$src" O="$out" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
	"${KMAKE[@]}" -s -C "$src" O="$out" olddefconfig >/dev/null
	check_config ||
		die "config fragments do not apply cleanly for $variant-$profile (missing dependency?)"
	echo "$stamp" > "$out/.fragments"
fi

log "building $variant-$profile for $GUEST_ARCH${GUEST_PAGE:+ $GUEST_PAGE} ($JOBS jobs; log: ${out#"$TOP"/}/build.log)"
if ! "${KMAKE[@]}" -C "$src" O="$out" -j"$JOBS" "$(basename "$KIMAGE")" modules > "$out/build.log" 2>&1; then
	grep -E -B2 -A4 'error|Error' "$out/build.log" | tail -40 >&2
	die "kernel build failed: $variant-$profile"
fi
# KASAN inflates stack frames; those warnings are not ours.
grep -E ' warning: ' "$out/build.log" | grep -v -e 'frame size' >&2 || true
rm -rf "$out/mods"
"${KMAKE[@]}" -s -C "$src" O="$out" INSTALL_MOD_PATH="$out/mods" INSTALL_MOD_STRIP=1 \
	modules_install > /dev/null
