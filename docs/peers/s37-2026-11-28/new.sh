#!/bin/bash
# The build with quiet contexts out of the turn (de10540+): burst cells
# (two invocations, the second in reverse order), issue 15's own scenario
# (two rounds), the grow and fetch cells (one invocation each): memext's
# default against admission at the peak.
cd /work/main
D=/var/tmp/s37
PEAK=memext+admit_at_peak=true+admit_within=30s
run() {  # NAME ARGS...
  [ -e $D/stop ] && exit 0
  local n=$1; shift
  echo "$(date +%T) start $n" >> $D/progress
  python3 bench/peers/run.py "$@" --out $D/$n > $D/$n.out 2>&1
  echo "$(date +%T) end $n rc=$?" >> $D/progress
}
SCEN="--cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst"
run q-b-r1 --noise burst --modes ideal,memext,$PEAK --rounds 1
run q-scen $SCEN --modes $PEAK,memext,ideal --rounds 2
run q-grow --noise grow --modes ideal,memext,$PEAK --rounds 1
run q-fetch --noise fetch --modes $PEAK,memext,ideal --rounds 1
run q-b-r2 --noise burst --modes $PEAK,memext,ideal --rounds 1
