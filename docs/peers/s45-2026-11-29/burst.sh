#!/bin/bash
# Session 45: the full burst cells on main's build: ideal, memext's default,
# session 35's closest pair, and the closest bound of session 32
# (oracle-split, wakes one at a time, bulk read-back, noise at 0.3 CPU).
cd /work/main
D=/var/tmp/s45
PAIR=memext+cpu_max=0.3+wakes_at_once=1+admit_within=30s
echo "$(date +%T) start b1" >> $D/progress
python3 bench/peers/run.py --noise burst --modes ideal,memext,$PAIR,oracle-split \
  --oracle-serial --oracle-willneed --split-cpu-max 0.3 --rounds 2 --out $D/b1 > $D/b1.out 2>&1
echo "$(date +%T) end b1 rc=$?" >> $D/progress
