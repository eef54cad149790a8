#!/bin/sh
# SPDX-License-Identifier: MIT
# What gpualert.so brings into slurmstepd, srun, sbatch and salloc: its
# DT_NEEDED library is libc alone (no libz, no libcurl: those are
# delivery's, in gpualert-send; PCRE2 is loaded by the report process's
# first rule, plugin/pcre2-lazy.c), and every symbol it leaves undefined
# is Slurm's (spank_*, slurm_*, resolved from the loading process) or a
# versioned libc one.  An undefined ga_* symbol would be a
# plugin that links but fails to load under -z now: b_lundef=false lets
# it through the link.
#   test-plugin-deps.sh PLUGIN
. "$(dirname "$0")/../tap.sh"

so=$1
command -v readelf >/dev/null && command -v nm >/dev/null ||
	skip_all "readelf and nm (binutils) are needed"

needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
diag "NEEDED: $(echo $needed)"
if [ -z "$needed" ]; then
	nok "readelf lists the plugin's DT_NEEDED"
else
	ok "readelf lists the plugin's DT_NEEDED"
fi
extra=$(printf '%s\n' "$needed" | grep -v -e '^libc\.so\.')
if [ -z "$extra" ]; then
	ok "DT_NEEDED is libc only"
else
	nok "DT_NEEDED is libc only: also $(echo $extra)"
fi

# Undefined, strong, without a version: must be Slurm's.
stray=$(nm -D --undefined-only "$so" | awk '$1 == "U" && $2 !~ /@/ {print $2}' |
	grep -v -e '^spank_' -e '^slurm_')
if [ -z "$stray" ]; then
	ok "every undefined symbol is Slurm's or versioned"
else
	nok "undefined symbols nothing provides: $(echo $stray)"
fi
# libgcc's CPU model (__builtin_cpu_supports) would come with a
# constructor running a dozen CPUIDs, each a hypervisor trap on a VM, in
# every process that loads the plugin: the scans ask on first use instead.
syms=$(nm "$so" 2>/dev/null)
if [ -z "$syms" ]; then
	ok "# SKIP the plugin is stripped: no symbols to look for the CPU-model constructor"
elif printf '%s\n' "$syms" | grep -q -e '__cpu_indicator_init' -e '__cpu_model'; then
	nok "no libgcc CPU-model constructor runs when the plugin is loaded"
else
	ok "no libgcc CPU-model constructor runs when the plugin is loaded"
fi
tap_done
exit
