#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo-supernode: two nodes in front of one pool run the demo's
# model with one copy of its weights in the pool, then hand the KV cache
# of a prompt from node 0 to node 1, which decodes from it.
#
# usage: demo-supernode.sh full|smoke OUTDIR
# env (from make): O, VMLINUZ, VM_INITRD
# The two guests (selftests/vm/run-2vm.sh) run
# tools/demo/demo-supernode-run.sh; this script reads their figures off
# the consoles, prints them, and judges: both nodes finished every step
# with every tensor checked at every use, the KV handed over decoded and
# one of another split caught, each node's regions smaller by exactly the
# weights' bytes with the shared copy, and the pool holding less.  The last line is the
# verdict, and the exit status agrees with it: 0 for "ok", 1 for anything
# else.  Figures and logs are kept in OUTDIR.
set -u
size=$1 out=$2
bin=${O:-build}/bin
fail() { echo "make demo-supernode: $*" >&2; exit 1; }

case $size in
full|smoke) ;;
*) fail "SIZE must be full or smoke, not '$size'" ;;
esac
for b in hyper-plan hyper-run; do
	[ -x "$bin/$b" ] || fail "missing $bin/$b; run make first"
done
[ -r "${VMLINUZ:-}" ] || fail "no VM kernel ${VMLINUZ:-}; install linux-image-amd64"
[ -r "${VM_INITRD:-}" ] || fail "no VM initramfs ${VM_INITRD:-}; run make first"
rm -rf "$out"
mkdir -p "$out" || fail "cannot create $out"

cat <<TXT
hyperoffload supernode demo ($size)
  nodes:    two QEMU (TCG) guests, hyper.ko with node_id 0 and 1, whose pool
            window is one shared host file (selftests/vm/run-2vm.sh)
  model:    the demo's: Llama-2 7B's layer structure at 1/8 width, fp32,
            $( [ "$size" = smoke ] && echo 4 || echo 8) of 32 layers, prompt 16 + 4 decode steps, planned
            under half its unplanned peak (the same schedule on both nodes)
  runs:     both nodes with private weights at once, then both from one
            shared copy (node 0 publishes it), then node 0 runs the prompt
            and hands its KV cache to node 1, which decodes; every tensor
            is checked at every use, SGEMM compute
  judged:   every run passes its checks, the KV cache of another split is
            caught, each node holds exactly the weights' bytes less with
            the shared copy, and the pool holds less
  booting:  $(basename "$VMLINUZ"), two guests
TXT

VM_APPEND="HYPER_DEMO_SIZE=$size" selftests/vm/run-vm.sh "$VMLINUZ" \
	"$VM_INITRD" tools/demo/demo-supernode.suite "$out/vm.log"

# "demo-sn: KEY VALUE..." of node N
get() { sed -n "s/^demo-sn: $2 //p" "$out/vm.log.node$1" 2>/dev/null | tail -n 1; }
n_judged=0 missed=0
judge() {
	n_judged=$((n_judged + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n_judged - $2"
	else
		echo "not ok $n_judged - $2${3:+: $3}"
		missed=$((missed + 1))
	fi
}
verdict() {
	echo
	echo "figures and consoles: $out/"
	[ $missed -eq 0 ] || fail "not ok: $missed of $n_judged judged items missed (the \"not ok\" lines above)"
	echo "make demo-supernode: ok: one copy of the weights served both nodes, saving $(mib $((pu - su))) MiB of the pool; node 1 decoded from node 0's KV cache, every tensor checked at every use"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

echo
for n in 0 1; do
	grep '^demo: ' "$out/vm.log.node$n" 2>/dev/null | sed 's/^/  vm> /'
done
echo
for n in 0 1; do
	st=$(get "$n" status)
	why=$(get "$n" "failed:")
	[ -n "$st" ] || why="it did not finish the demo; see $out/vm.log.node$n"
	judge "$([ "$st" = 0 ] && echo 0 || echo 1)" \
		"node $n: every run passed, every tensor checked at every use" "$why"
done
bad=$(grep '^not ok vm:' "$out/vm.log" | sed 's/^not ok //' | tr '\n' ' ')
judge "$([ -z "$bad" ] && grep -q '^ok vm:.*:dmesg-clean$' "$out/vm.log" && echo 0 || echo 1)" \
	"both guests completed, their kernel logs clean (no BUG, WARNING, Oops)" \
	"${bad:-no dmesg-clean check in $out/vm.log}"
[ $missed -eq 0 ] || { pu=0 su=0; verdict; }

p0=$(get 0 "private node_used") p1=$(get 1 "private node_used")
s0=$(get 0 "shared node_used") s1=$(get 1 "shared node_used")
pu=$(get 0 "private used") su=$(get 0 "shared used")
ob=$(get 0 weights_object_bytes) wb=$(get 0 weights_tensor_bytes)
wt=$(get 0 weights_object_tensors)
kt=$(get 0 kv_handed_over) kb=$(get 0 kv_object_bytes)
dc=$(get 1 decode_uses_checked) ds=$(get 1 decode_uses_scheduled)
for v in "$p0" "$p1" "$s0" "$s1" "$pu" "$su" "$ob" "$wb" "$wt" "$kt" "$kb" "$dc" "$ds"; do
	case $v in
	''|*[!0-9]*) fail "a figure is missing from the consoles; see $out/vm.log.node0 and .node1" ;;
	esac
done
judge "$([ "$dc" = "$ds" ] && [ "$dc" -gt 0 ] && echo 0 || echo 1)" \
	"node 1 decoded from node 0's KV cache, $dc of $ds uses checked"
judge "$([ -n "$(get 1 wrong_kv_caught)" ] && echo 0 || echo 1)" \
	"a KV cache of another split fails node 1's checks"
judge "$([ $((p0 - s0)) = "$wb" ] && [ $((p1 - s1)) = "$wb" ] && echo 0 || echo 1)" \
	"each node's regions hold exactly the weights' $wb bytes less with the shared copy" \
	"node 0 $((p0 - s0)), node 1 $((p1 - s1)) bytes less"
judge "$([ "$su" -lt "$pu" ] && echo 0 || echo 1)" \
	"the pool holds less with one shared copy of the weights than with two private ones" \
	"$su bytes against $pu"
{
	echo
	echo "pool bytes used, MiB     node 0   node 1   weights object   pool (chunks, both nodes)"
	printf "two private copies     %7s  %7s  %15s   %s\n" "$(mib "$p0")" \
		"$(mib "$p1")" "-" "$(mib "$pu")"
	printf "one shared copy        %7s  %7s  %15s   %s\n" "$(mib "$s0")" \
		"$(mib "$s1")" "$(mib "$ob")" "$(mib "$su")"
	printf "saved                  %7s  %7s  %15s   %s\n" \
		"$(mib $((p0 - s0)))" "$(mib $((p1 - s1)))" "-$(mib "$ob")" \
		"$(mib $((pu - su)))"
	echo "  node N: this node's regions (sysfs node_used); pool: the 2 MiB chunks every"
	echo "  node, the objects and the metadata hold (sysfs used); read while both runs"
	echo "  held everything.  The weights object: the $wt weights the plan keeps in the"
	echo "  pool, $(mib "$wb") MiB (it keeps the others on the device)."
	echo
	echo "KV handoff:"
	echo "  node 0 ran the prompt (steps 0..$(( $(get 0 prompt_steps) - 1 ))) and exported $kt KV tensors ($(mib "$kb") MiB object)"
	echo "  node 1 decoded steps $(get 1 decode_first_step).. ($(get 1 decode_steps) steps) from it: $dc of $ds uses checked"
	echo "  the same object at another split fails node 1's checks: $(get 1 wrong_kv_caught)"
} | tee "$out/figures.txt"
cat > "$out/summary.json" <<JSON
{ "size": "$size",
  "private": { "node0_used": $p0, "node1_used": $p1, "pool_used": $pu },
  "shared": { "node0_used": $s0, "node1_used": $s1, "pool_used": $su,
              "weights_object_bytes": $ob },
  "weights": { "tensors": $wt, "bytes": $wb },
  "kv": { "tensors": $kt, "object_bytes": $kb,
          "decode_uses_checked": $dc, "decode_uses_scheduled": $ds } }
JSON
verdict
