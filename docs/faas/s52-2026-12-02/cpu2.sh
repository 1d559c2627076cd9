#!/bin/bash
# As cpu1.sh, with the server's wait for a CPU before the handler recorded.
cd /work/main
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram \
  --modes ideal,memext --rounds 2 --out /var/tmp/s52/cpu2 > /var/tmp/s52/cpu2.log 2>&1
echo "rc=$?" >> /var/tmp/s52/cpu2.log
