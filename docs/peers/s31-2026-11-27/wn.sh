#!/bin/bash
# After grow.sh: the split oracle with the cheapest swap-in (bulk read-back at each wake).
while ! grep -q done /var/tmp/s31/grow/ab.log 2>/dev/null; do sleep 5; done
OUT=/var/tmp/s31/split; mkdir -p $OUT
[ -e $OUT/stop ] && exit 0
echo "$(date +%T) wn" >> $OUT/ab.log
(cd /work/main && python3 bench/peers/run.py --noise burst --modes ideal,oracle-split --oracle-willneed --rounds 2 --out $OUT/wn > $OUT/wn.log 2>&1)
echo "$(date +%T) wn rc=$?" >> $OUT/ab.log
echo done-wn >> $OUT/ab.log
