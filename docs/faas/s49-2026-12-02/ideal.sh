#!/bin/bash
# bench/faas ideal (no cap, no swap) alone: this session's ideal for the targets.
cd /work/main
echo "$(date +%T) start ideal" >> /var/tmp/s49/progress
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --modes ideal --rounds 1 --out /var/tmp/s49/ideal > /var/tmp/s49/ideal.out 2>&1
echo "$(date +%T) end ideal rc=$?" >> /var/tmp/s49/progress
