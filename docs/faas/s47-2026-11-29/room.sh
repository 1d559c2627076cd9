#!/bin/bash
# bench/faas on zram, memext's default, one round, its daemon logging each plan's room account
# (the `room` event, debug) to trace the calls the keep order would have found warm.
cd /work/main
D=/var/tmp/s47
echo "$(date +%T) start room" >> $D/progress
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext --rounds 1 --out $D/room > $D/room.out 2>&1
echo "$(date +%T) end room rc=$?" >> $D/progress
