#!/bin/bash
# After ab.sh: the grow cells with the noise capped apart (split), ideal beside it.
while ! grep -q done /var/tmp/s31/ab/ab.log 2>/dev/null; do sleep 5; done
OUT=/var/tmp/s31/grow; mkdir -p $OUT
[ -e $OUT/stop ] && exit 0
echo "$(date +%T) split" >> $OUT/ab.log
(cd /work/main && python3 bench/peers/run.py --noise grow --modes ideal,split --rounds 1 --out $OUT/split > $OUT/split.log 2>&1)
echo "$(date +%T) split rc=$?" >> $OUT/ab.log
echo done >> $OUT/ab.log
