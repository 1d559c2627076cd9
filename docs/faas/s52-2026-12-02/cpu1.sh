#!/bin/bash
# Where a warm call's handler time goes: each call now reports its CPU time
# and its wait for a CPU. Ideal and memext's default, two rotated rounds.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes ideal,memext --rounds 2 --out /var/tmp/s52/cpu1 > /var/tmp/s52/cpu1.log 2>&1
echo "rc=$?" >> /var/tmp/s52/cpu1.log
