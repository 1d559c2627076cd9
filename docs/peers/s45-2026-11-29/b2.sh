#!/bin/bash
# Session 45: the bound's frontier in Redis x burst: oracle-split (wakes one
# at a time, bulk read-back) with the noise held to 0.1 CPU, beside ideal.
cd /work/main
D=/var/tmp/s45
while ! grep -q 'end b1' $D/progress; do sleep 10; done
[ -e $D/stop ] && exit 0
echo "$(date +%T) start b2" >> $D/progress
python3 bench/peers/run.py --critical redis --noise burst --modes ideal,oracle-split \
  --oracle-serial --oracle-willneed --split-cpu-max 0.1 --rounds 2 --out $D/b2 > $D/b2.out 2>&1
echo "$(date +%T) end b2 rc=$?" >> $D/progress
