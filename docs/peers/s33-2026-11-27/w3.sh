#!/bin/bash
cd /work/main
run() { [ -e /var/tmp/s33/stop ] && exit 0; echo "$(date +%T) start $1" >> /var/tmp/s33/progress; "${@:2}" > /var/tmp/s33/$1.out 2>&1; echo "$(date +%T) end $1 rc=$?" >> /var/tmp/s33/progress; }
run w3 python3 bench/peers/run.py --noise burst --modes ideal,memext+cpu_max=0.3+wakes_at_once=1+admit_within=30s,memext+cpu_max=0.3 --rounds 2 --out /var/tmp/s33/w3
