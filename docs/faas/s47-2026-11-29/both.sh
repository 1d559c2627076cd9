#!/bin/bash
# bench/faas on both tiers, memext's default, one round, its daemon logging each plan's room account.
cd /work/main
D=/var/tmp/s47
echo "$(date +%T) start both" >> $D/progress
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile,zram \
  --modes memext --rounds 1 --out $D/both > $D/both.out 2>&1
echo "$(date +%T) end both rc=$?" >> $D/progress
