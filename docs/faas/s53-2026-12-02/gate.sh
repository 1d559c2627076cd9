#!/bin/bash
# The reclaimer yielding to read-backs (daemon.yield_to_wakes) on today's
# build, alone and with 96 MiB kept free (daemon.keep_free), against the
# default. Two rotated rounds.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext,memext+daemon.yield_to_wakes=true,memext+daemon.keep_free=96MiB+daemon.yield_to_wakes=true \
  --rounds 2 --out /var/tmp/s53/gate > /var/tmp/s53/gate.log 2>&1
echo "rc=$?" >> /var/tmp/s53/gate.log
