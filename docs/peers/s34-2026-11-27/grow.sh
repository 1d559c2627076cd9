#!/bin/bash
# bench/peers grow cells (session 34's build): memext's default against cpu_max + wakes_at_once, two rounds.
cd /work/main
OUT=/var/tmp/s34/grow
[ -e /var/tmp/s34/stop ] && exit 0
echo "$(date +%T) start grow" >> /var/tmp/s34/grow.progress
python3 bench/peers/run.py --noise grow --modes ideal,memext,memext+cpu_max=0.3+wakes_at_once=1+admit_within=30s --rounds 2 --out $OUT > /var/tmp/s34/grow.out 2>&1
echo "$(date +%T) end grow rc=$?" >> /var/tmp/s34/grow.progress
