#!/bin/bash
# The quick matrix: ideal, memext, session 24's variant (fast_wakes + page-out
# + no room rule) with keep_anon (the critical class's new default) and
# without it; TREE's build, ROUNDS rounds.
OUT=/var/tmp/s29/matrix; mkdir -p $OUT
V=memext+fast_wakes=true+daemon.reclaim=page-out+daemon.limit_room=false
cd ${TREE:?}
for r in $(seq 1 ${ROUNDS:-2}); do
  [ -e $OUT/stop ] && exit 0
  echo "$(date +%T) r$r" >> $OUT/ab.log
  python3 bench/peers/run.py --quick --modes ideal,memext,$V,$V+critical.keep_anon=false --rounds 1 --out $OUT/r$r > $OUT/r$r.log 2>&1
  echo "$(date +%T) r$r rc=$?" >> $OUT/ab.log
done
echo done >> $OUT/ab.log
