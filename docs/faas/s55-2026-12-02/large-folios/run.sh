#!/bin/bash
# mthp.c on a zram swap device of its own (lz4), with anonymous mTHP of SIZE
# (e.g. 64kB) set to always, against all mTHP sizes off; ROUNDS rounds, order
# rotated. Restores the mTHP settings and removes the device however it ends.
# Usage (root, no other swap on): run.sh SIZE [ROUNDS] [MIB]
set -u
SIZE=$1; ROUNDS=${2:-3}; MIB=${3:-64}; WILL=${WILL:-}
T=/sys/kernel/mm/transparent_hugepage
K=$T/hugepages-$SIZE/enabled
old=$(sed 's/.*\[\(.*\)\].*/\1/' $K)
N=$(cat /sys/class/zram-control/hot_add)
cleanup() { echo $old > $K; swapoff /dev/zram$N 2>/dev/null; echo 1 > /sys/block/zram$N/reset; echo $N > /sys/class/zram-control/hot_remove; }
trap cleanup EXIT
echo lz4 > /sys/block/zram$N/comp_algorithm
echo 1G > /sys/block/zram$N/disksize
mkswap -q /dev/zram$N && swapon -p 100 /dev/zram$N
st() { for f in swpout swpin swpin_fallback anon_fault_alloc; do printf "%s=%s " $f "$(cat $T/hugepages-$SIZE/stats/$f 2>/dev/null)"; done; }
for r in $(seq $ROUNDS); do
  for m in $( [ $((r % 2)) = 1 ] && echo "never always" || echo "always never"); do
    echo $m > $K
    before=$(st)
    echo "round $r $SIZE=$m: $(./mthp $MIB $WILL)"
    echo "   stats before: $before"; echo "   stats after:  $(st)"
  done
done
