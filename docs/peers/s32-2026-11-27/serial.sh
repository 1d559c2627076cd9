#!/bin/bash
cd /work/main
while pgrep -f cpuset.sh > /dev/null; do sleep 5; done
rm -f /var/tmp/s32/stop
run() { [ -e /var/tmp/s32/stop ] && exit 0; echo "$(date +%T) start $1" >> /var/tmp/s32/progress; "${@:2}" > /var/tmp/s32/$1.out 2>&1; echo "$(date +%T) end $1 rc=$?" >> /var/tmp/s32/progress; }
run ser1 python3 bench/peers/run.py --noise burst --modes ideal,oracle-split --oracle-serial --oracle-willneed --rounds 1 --out /var/tmp/s32/ser1
run serq1 python3 bench/peers/run.py --noise burst --modes oracle-split,ideal --oracle-serial --oracle-willneed --split-cpu-max 0.3 --rounds 1 --out /var/tmp/s32/serq1
