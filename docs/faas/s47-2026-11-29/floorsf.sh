#!/bin/bash
# bench/faas on the swap file: memext's default (floor 4 MiB) against a 2 MiB floor, two rotated
# rounds, the 2 MiB floor first, the daemon logging each plan's room account.
cd /work/main
D=/var/tmp/s47
echo "$(date +%T) start floorsf" >> $D/progress
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes memext+floor=2MiB,memext --rounds 2 --out $D/floorsf > $D/floorsf.out 2>&1
echo "$(date +%T) end floorsf rc=$?" >> $D/progress
