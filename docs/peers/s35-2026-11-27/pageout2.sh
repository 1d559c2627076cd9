#!/bin/bash
# The second round of pageout.sh, modes in reverse order; starts once the first has ended.
cd /work/main
P=/var/tmp/s35/progress
while ! grep -q "end pageout-r1" $P; do sleep 5; done
[ -e /var/tmp/s35/stop ] && exit 0
echo "$(date +%T) start pageout-r2" >> $P
python3 bench/peers/run.py --noise burst --modes memext+cpu_idle=true+daemon.reclaim=page-out,memext+daemon.reclaim=page-out,memext,ideal --rounds 1 --out /var/tmp/s35/pageout-r2 > /var/tmp/s35/pageout-r2.out 2>&1
echo "$(date +%T) end pageout-r2 rc=$?" >> $P
