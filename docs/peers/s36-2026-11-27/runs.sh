#!/bin/bash
# bench/peers grow cells: memext's default against admission at the peak,
# after the bench's 30 s warm-up (two invocations, the second in reverse
# order) and after a 120 s one (the jobs' peaks learned). Earlier builds of
# the session ran the same way with the modes named in the README.
cd /work/main
D=/var/tmp/s36
PEAK=memext+admit_at_peak=true+admit_within=120s
run() {  # NAME WARMUP MODES
  [ -e $D/stop ] && exit 0
  echo "$(date +%T) start $1" >> $D/progress
  python3 bench/peers/run.py --noise grow --warmup $2 --modes $3 --rounds 1 --out $D/$1 > $D/$1.out 2>&1
  echo "$(date +%T) end $1 rc=$?" >> $D/progress
}
run g30-r1 30 ideal,memext,$PEAK
run g30-r2 30 $PEAK,memext,ideal
run g120 120 $PEAK,memext,ideal
