#!/bin/bash
# issue 15's scenario (postgres x burst, session 24's parameters), base
# (c795ac6, session 28's final) and swap (a critical context's
# memory.swappiness 0 on v1), order A B B A; each with memext's default and
# session 24's best variant (fast_wakes + page-out + no room rule).
OUT=/var/tmp/s29/peers; mkdir -p $OUT
V=memext+fast_wakes=true+daemon.reclaim=page-out+daemon.limit_room=false
run() { # NAME TREE ROUND
  [ -e $OUT/stop ] && return
  echo "$(date +%T) $1-r$3" >> $OUT/ab.log
  (cd $2 && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext,$V --rounds 1 --out $OUT/$1-r$3 > $OUT/$1-r$3.log 2>&1)
  echo "$(date +%T) $1-r$3 rc=$?" >> $OUT/ab.log
}
run base /var/tmp/s29-base 1
run swap /var/tmp/s29-swap 1
run swap /var/tmp/s29-swap 2
run base /var/tmp/s29-base 2
echo done >> $OUT/ab.log
