#!/bin/bash
# bench/faas ideal alone (no cap, no swap area), one round: the session's own reference.
cd /work/main
D=/var/tmp/s46
echo "$(date +%T) start ideal" >> $D/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile \
  --modes ideal --rounds 1 --out $D/ideal > $D/ideal.out 2>&1
echo "$(date +%T) end ideal rc=$?" >> $D/progress
