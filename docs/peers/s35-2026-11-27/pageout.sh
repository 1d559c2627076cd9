#!/bin/bash
# bench/peers burst cells: memext's default against reclaim = "page-out" (with and without cpu_idle).
cd /work/main
P=/var/tmp/s35/progress
[ -e /var/tmp/s35/stop ] && exit 0
echo "$(date +%T) start pageout-r1" >> $P
python3 bench/peers/run.py --noise burst --modes ideal,memext,memext+daemon.reclaim=page-out,memext+cpu_idle=true+daemon.reclaim=page-out --rounds 1 --out /var/tmp/s35/pageout-r1 > /var/tmp/s35/pageout-r1.out 2>&1
echo "$(date +%T) end pageout-r1 rc=$?" >> $P
