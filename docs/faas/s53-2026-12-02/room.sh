#!/bin/bash
# Room kept free for a wake to read into (daemon.keep_free, 96 MiB: the
# largest function's heap and interpreter) against the default 1/32 of the
# cap (53 MiB), alone and with the reclaimer's lowerings yielding to the
# read-back (daemon.yield_to_wakes). Two rotated rounds.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes memext,memext+daemon.keep_free=96MiB,memext+daemon.keep_free=96MiB+daemon.yield_to_wakes=true \
  --rounds 2 --out /var/tmp/s53/room > /var/tmp/s53/room.log 2>&1
echo "rc=$?" >> /var/tmp/s53/room.log
