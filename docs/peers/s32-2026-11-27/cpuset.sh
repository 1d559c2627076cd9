#!/bin/bash
cd /work/main
run() { [ -e /var/tmp/s32/stop ] && exit 0; echo "$(date +%T) start $1" >> /var/tmp/s32/progress; "${@:2}" > /var/tmp/s32/$1.out 2>&1; echo "$(date +%T) end $1 rc=$?" >> /var/tmp/s32/progress; }
run pin1 python3 bench/peers/run.py --noise burst --modes ideal,oracle-split,split --split-cpus 1 --rounds 1 --out /var/tmp/s32/pin1
run nopin1 python3 bench/peers/run.py --noise burst --modes ideal,oracle-split,split --rounds 1 --out /var/tmp/s32/nopin1
run nopin2 python3 bench/peers/run.py --noise burst --modes split,ideal,oracle-split --rounds 1 --out /var/tmp/s32/nopin2
run pin2 python3 bench/peers/run.py --noise burst --modes split,ideal,oracle-split --split-cpus 1 --rounds 1 --out /var/tmp/s32/pin2
