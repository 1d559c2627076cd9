#!/bin/bash
# 96 MiB kept free with the reclaimer yielding to read-backs, again against
# the default, and 64 MiB kept free so. Two rotated rounds.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext,memext+daemon.keep_free=96MiB+daemon.yield_to_wakes=true,memext+daemon.keep_free=64MiB+daemon.yield_to_wakes=true \
  --rounds 2 --out /var/tmp/s53/size > /var/tmp/s53/size.log 2>&1
echo "rc=$?" >> /var/tmp/s53/size.log
