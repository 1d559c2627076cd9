#!/bin/bash
# mthp.c on a zram swap device of its own (lz4), each read-back (the heap's own
# faults, MADV_WILLNEED, process_vm_readv) with anonymous mTHP of SIZE always
# and with all sizes off (never); ROUNDS rounds, the order rotated each round.
# Restores the mTHP setting and removes the device however it ends.
# Usage (root, no other swap on): run.sh SIZE [ROUNDS] [MIB]
#   (BIN=./mthp; HOWS="touch willneed populate collapse", the read-backs to run)
set -u
SIZE=$1; ROUNDS=${2:-3}; MIB=${3:-64}; BIN=${BIN:-./mthp}
T=/sys/kernel/mm/transparent_hugepage
K=$T/hugepages-$SIZE/enabled
old=$(sed 's/.*\[\(.*\)\].*/\1/' $K)
N=$(cat /sys/class/zram-control/hot_add)
cleanup() { echo $old > $K; swapoff /dev/zram$N 2>/dev/null; echo 1 > /sys/block/zram$N/reset; echo $N > /sys/class/zram-control/hot_remove; }
trap cleanup EXIT
echo lz4 > /sys/block/zram$N/comp_algorithm
echo 1G > /sys/block/zram$N/disksize
mkswap -q /dev/zram$N && swapon -p 100 /dev/zram$N
st() { for f in swpout swpin swpin_fallback; do printf "%s=%s " $f "$(cat $T/hugepages-$SIZE/stats/$f 2>/dev/null)"; done; }
combos=(); for h in ${HOWS:-touch willneed populate}; do combos+=("never $h" "always $h"); done
n=${#combos[@]}
for r in $(seq $ROUNDS); do
  for i in $(seq 0 $((n - 1))); do
    c=(${combos[$(( (i + r) % n ))]})
    echo ${c[0]} > $K
    before=$(st)
    how=${c[1]}; [ $how = touch ] && how=
    echo "round $r $SIZE=${c[0]} ${c[1]}: $($BIN $MIB $how) | before $before | after $(st)"
  done
done
