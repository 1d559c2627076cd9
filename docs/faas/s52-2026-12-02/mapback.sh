#!/bin/bash
# MADV_COLLAPSE before predicted wakes (map_back, on by default) against
# none: its CPU beside the cold calls' wait for a CPU. Two rotated rounds.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext,memext+map_back=false --rounds 2 --out /var/tmp/s52/mapback > /var/tmp/s52/mapback.log 2>&1
echo "rc=$?" >> /var/tmp/s52/mapback.log
