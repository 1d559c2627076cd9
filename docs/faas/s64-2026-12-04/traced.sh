#!/bin/bash
# One bench/faas run on zram (MODE, default memext) with a scheduler trace (perf record of
# sched_switch/sched_waking, CLOCK_MONOTONIC) of DUR s taken START s into the replay, and what
# schedwhy.py needs to tell the tasks apart. Run from a memext tree with a release build.
# Usage: traced.sh OUT [START] [DUR] [MODE]; then
#   perf script -F comm,tid,cpu,time,event,trace -i OUT/sched.data > OUT/sched.txt
#   schedwhy.py OUT
set -u
OUT=$1 START=${2:-40} DUR=${3:-60} MODE=${4:-memext}
mkdir -p "$OUT"
export MEMEXT_LOG=info,memext::daemon::events=debug
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 \
   --tiers zram --modes "$MODE" --rounds 1 --out "$OUT/run" > "$OUT/run.log" 2>&1 &
RUN=$!
echo "$RUN" > "$OUT/run.pid"
until grep -q replaying "$OUT/run.log" 2>/dev/null; do sleep 0.5; kill -0 $RUN 2>/dev/null || exit 1; done
# the daemon's mover and reclaimer threads' policy once a second (0 normal, 5 idle)
D=$(pgrep -x memext | head -1)
( while kill -0 $RUN 2>/dev/null && [ -n "$D" ]; do
    awk -v t="$(date +%s)" '/^policy/ {print t, FILENAME, $3}' /proc/$D/task/*/sched 2>/dev/null
    sleep 1; done ) > "$OUT/policy.txt" &
sleep "$START"
# who is who: pid -> function cgroup, the invoker's threads, the daemon's
for d in /sys/fs/cgroup/memory/memext-faas/*/; do
  [ -f "$d/cgroup.procs" ] || continue
  for p in $(cat "$d/cgroup.procs"); do echo "$p $(basename "$d")"; done
done > "$OUT/pids-functions.txt"
ls /proc/$RUN/task > "$OUT/tids-invoker.txt"
pgrep -x memext | while read p; do ls /proc/$p/task | sed "s/^/$p /"; done > "$OUT/tids-daemon.txt"
python3 -c 'import time; print(time.time() - time.monotonic())' > "$OUT/epoch-minus-mono.txt"
perf record -k CLOCK_MONOTONIC -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking \
  -e sched:sched_wakeup_new -e sched:sched_migrate_task -a -o "$OUT/sched.data" -- sleep "$DUR" > "$OUT/perf.log" 2>&1
wait $RUN
echo "rc=$?" >> "$OUT/run.log"
