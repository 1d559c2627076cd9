#!/bin/bash
# bench/peers burst cells, the build before (53adc27) against the phantom-wake fix (d6f2ba7), each in its own
# invocation with its own ideal, alternating, the order rotated each round.
export MEMEXT_LOG=info,memext::daemon=debug
OUT=/var/tmp/s34/ab
mkdir -p $OUT
run() { [ -e /var/tmp/s34/stop ] && exit 0; echo "$(date +%T) start $1" >> $OUT/progress; (cd $2 && python3 bench/peers/run.py --noise burst --modes ideal,memext,memext+cpu_max=0.3+wakes_at_once=1+admit_within=30s --rounds 1 --out $OUT/$1) > $OUT/$1.out 2>&1; echo "$(date +%T) end $1 rc=$?" >> $OUT/progress; }


run old-r1 /var/tmp/s34/wt-old
run new-r1 /var/tmp/s34/wt-new
run new-r2 /var/tmp/s34/wt-new
run old-r2 /var/tmp/s34/wt-old
run old-r3 /var/tmp/s34/wt-old
run new-r3 /var/tmp/s34/wt-new
echo "$(date +%T) done" >> $OUT/progress
