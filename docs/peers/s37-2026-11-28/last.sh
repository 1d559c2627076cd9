#!/bin/bash
# After after.sh: the burst cells with admission at the peak and cpu_idle
# on the session's final build, beside memext's default and ideal.
cd /work/main
D=/var/tmp/s37
while ! grep -q "end q-grow2" $D/progress; do [ -e $D/stop ] && exit 0; sleep 10; done
PEAKI=memext+admit_at_peak=true+admit_within=30s+cpu_idle=true
[ -e $D/stop ] && exit 0
echo "$(date +%T) start q-bi" >> $D/progress
python3 bench/peers/run.py --noise burst --modes ideal,$PEAKI,memext --rounds 1 --out $D/q-bi > $D/q-bi.out 2>&1
echo "$(date +%T) end q-bi rc=$?" >> $D/progress
