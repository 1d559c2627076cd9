#!/bin/bash
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext,memext+map_kept=true --rounds 3 --out /var/tmp/s51/kept1 > /var/tmp/s51/kept1.log 2>&1
echo "rc=$?" >> /var/tmp/s51/kept1.log
