#!/bin/bash
# issue 15's scenario (postgres x burst, 512 MiB cap, 12 noise containers of
# 53 MiB waking every 20-40 s), base (eab43bd) against wake (main: a wake
# planned and admitted for all it was seen using), order A B B A; then
# bench/faas, one round each.
OUT=/var/tmp/s30/sc; mkdir -p $OUT
run() { # NAME TREE ROUND
  [ -e $OUT/stop ] && return
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
run base /var/tmp/s30-base 1
run wake /work/main 1
run wake /work/main 2
run base /var/tmp/s30-base 2
[ -e $OUT/stop ] || (cd /work/main && ROUNDS=1 bash bench/faas/ab.sh /var/tmp/s30/faas base /var/tmp/s30-base wake /work/main)
echo done >> $OUT/ab.log
