#!/bin/bash
# The new default on a host meant to be full (room kept free for the
# largest function, resting functions' lowerings yielding to read-backs)
# against the previous one (1/32 of the cap, 53 MiB, kept free; no
# lowering yields). Two rotated rounds.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext,memext+daemon.keep_free=53MiB+daemon.yield_to_wakes=false \
  --rounds 2 --out /var/tmp/s53/default > /var/tmp/s53/default.log 2>&1
echo "rc=$?" >> /var/tmp/s53/default.log
