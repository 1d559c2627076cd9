#!/bin/bash
# A/B of the critical's inactive page cache left out of its demand: base (the
# build before) and cold (this build), order A B B A, in postgres x grow (quick)
# and the issue-15 scenario (postgres x burst, session 24's parameters).
OUT=/var/tmp/s25/cold; mkdir -p $OUT
run() { # NAME TREE ROUND
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  /var/tmp/s25/critstat.sh $OUT/stop-$1-r$3 > $OUT/$1-r$3.critstat 2>&1 &
  (cd $2 && python3 bench/peers/run.py --quick --critical postgres --noise grow --modes ideal,memext --rounds 1 --out $OUT/grow-$1-r$3 > $OUT/grow-$1-r$3.log 2>&1)
  (cd $2 && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext --rounds 1 --out $OUT/burst-$1-r$3 > $OUT/burst-$1-r$3.log 2>&1)
  touch $OUT/stop-$1-r$3
  echo "$(date +%T) $1-r$3 done" >> $OUT/ab.log
}
run base /var/tmp/s25/wt-base2 1
run cold /work/main 1
run cold /work/main 2
run base /var/tmp/s25/wt-base2 2
echo done >> $OUT/ab.log
