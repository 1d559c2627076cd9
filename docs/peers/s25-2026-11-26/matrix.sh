#!/bin/bash
# The quick matrix, ideal + memext + the v1-with-critical variant measured best in session 24, ROUNDS rounds.
cd /work/main
for r in $(seq 1 ${ROUNDS:-2}); do
  [ -e /var/tmp/s25/matrix/stop ] && exit 0
  python3 bench/peers/run.py --quick --modes ideal,memext,memext+fast_wakes=true+daemon.reclaim=page-out+daemon.limit_room=false --rounds 1 --out /var/tmp/s25/matrix/r$r > /var/tmp/s25/matrix/r$r.log 2>&1
done
