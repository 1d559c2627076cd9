#!/bin/bash
# After new.sh: issue 15's scenario again (its first invocation failed to
# start a container that the daemon froze) and the grow cells in reverse
# order with admit_within = 120s as in session 36 (q-grow used 30s, and
# its Redis ideal ran beside a compile).
cd /work/main
D=/var/tmp/s37
while ! grep -q "end q-b-r2" $D/progress; do [ -e $D/stop ] && exit 0; sleep 10; done
PEAK=memext+admit_at_peak=true+admit_within=30s
PEAK120=memext+admit_at_peak=true+admit_within=120s
run() {  # NAME ARGS...
  [ -e $D/stop ] && exit 0
  local n=$1; shift
  echo "$(date +%T) start $n" >> $D/progress
  python3 bench/peers/run.py "$@" --out $D/$n > $D/$n.out 2>&1
  echo "$(date +%T) end $n rc=$?" >> $D/progress
}
SCEN="--cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst"
run q-scen2 $SCEN --modes $PEAK,memext,ideal --rounds 2
run q-grow2 --noise grow --modes $PEAK120,memext,ideal --rounds 1
