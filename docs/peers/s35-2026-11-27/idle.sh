#!/bin/bash
# bench/peers burst and grow cells: memext's default, cpu_idle, cpu_idle + wakes_at_once, and cpu_max + wakes_at_once.
cd /work/main
P=/var/tmp/s35/progress
QUOTA=memext+cpu_max=0.3+wakes_at_once=1+admit_within=30s
IDLE=memext+cpu_idle=true
IDLEQ=memext+cpu_idle=true+wakes_at_once=1+admit_within=30s
run() {
  [ -e /var/tmp/s35/stop ] && exit 0
  echo "$(date +%T) start $1" >> $P
  python3 bench/peers/run.py --noise $2 --modes $3 --rounds 1 --out /var/tmp/s35/$1 > /var/tmp/s35/$1.out 2>&1
  echo "$(date +%T) end $1 rc=$?" >> $P
}
FWD=ideal,memext,$IDLE,$IDLEQ,$QUOTA
REV=$QUOTA,$IDLEQ,$IDLE,memext,ideal
run burst-r1 burst $FWD
run grow-r1 grow $FWD
run burst-r2 burst $REV
run grow-r2 grow $REV
