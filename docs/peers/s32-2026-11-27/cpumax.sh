#!/bin/bash
cd /work/main
run() { [ -e /var/tmp/s32/stop ] && exit 0; echo "$(date +%T) start $1" >> /var/tmp/s32/progress; "${@:2}" > /var/tmp/s32/$1.out 2>&1; echo "$(date +%T) end $1 rc=$?" >> /var/tmp/s32/progress; }
run q25 python3 bench/peers/run.py --noise burst --modes ideal,oracle-split,split --split-cpu-max 0.25 --rounds 1 --out /var/tmp/s32/q25
run q10 python3 bench/peers/run.py --noise burst --modes ideal,oracle-split,split --split-cpu-max 0.1 --rounds 1 --out /var/tmp/s32/q10
