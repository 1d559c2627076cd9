#!/bin/bash
# bench/faas on zram: memext's default (floor 4 MiB) against a 2 MiB floor, two rotated rounds,
# deaths recorded (deaths-*.json), the daemon logging each plan's room account.
cd /work/main
D=/var/tmp/s48
echo "$(date +%T) start floor" >> $D/progress
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext+floor=2MiB,memext --rounds 2 --out $D/floor > $D/floor.out 2>&1
echo "$(date +%T) end floor rc=$?" >> $D/progress
