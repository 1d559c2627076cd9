#!/bin/bash
# For each run of an ab.sh OUT dir: 60 s into its replay, the functions' swap-slot runs (s45 slots.py).
OUT=$1
while ! grep -q '^done' $OUT/ab.log 2>/dev/null; do
  for log in $OUT/*-r?.log; do
    s=${log%.log}.slots.txt
    [ -e $s ] && continue
    grep -q 'replaying' $log 2>/dev/null || continue
    grep -q 'results in' $log && { echo "missed" > $s; continue; }
    sleep 60
    PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
    python3 /work/main/docs/faas/s45-2026-11-29/slots.py $PIDS > $s 2>&1
  done
  sleep 2
done
