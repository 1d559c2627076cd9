#!/bin/bash
cd /work/main
run() { [ -e /var/tmp/s32/stop ] && exit 0; echo "$(date +%T) start $1" >> /var/tmp/s32/progress; "${@:2}" > /var/tmp/s32/$1.out 2>&1; echo "$(date +%T) end $1 rc=$?" >> /var/tmp/s32/progress; }
run mx python3 bench/peers/run.py --noise burst --modes ideal,memext,memext+cpu_max=0.3 --rounds 2 --out /var/tmp/s32/mx
