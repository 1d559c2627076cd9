#!/bin/bash
# bench/peers burst cells: memext's default against admission at the peak
# (alone and with cpu_idle), two invocations, the second in reverse order.
cd /work/main
D=/var/tmp/s37
PEAK=memext+admit_at_peak=true+admit_within=30s
PEAKI=memext+admit_at_peak=true+admit_within=30s+cpu_idle=true
run() {  # NAME MODES
  [ -e $D/stop ] && exit 0
  echo "$(date +%T) start $1" >> $D/progress
  python3 bench/peers/run.py --noise burst --modes $2 --rounds 1 --out $D/$1 > $D/$1.out 2>&1
  echo "$(date +%T) end $1 rc=$?" >> $D/progress
}
run b-r1 ideal,memext,$PEAK,$PEAKI
run b-r2 $PEAKI,$PEAK,memext,ideal
