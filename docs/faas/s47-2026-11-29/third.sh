#!/bin/bash
# bench/faas: ideal alone, then a third round of memext's default against a 2 MiB floor on zram
# (the 2 MiB floor first this time).
cd /work/main
D=/var/tmp/s47
echo "$(date +%T) start third" >> $D/progress
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes ideal,memext+floor=2MiB,memext --rounds 1 --out $D/third > $D/third.out 2>&1
echo "$(date +%T) end third rc=$?" >> $D/progress
