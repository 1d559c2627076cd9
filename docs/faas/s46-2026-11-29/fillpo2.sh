#!/bin/bash
# Takes over fillpo.sh's watch after its first mode (its loop would have recorded the first
# mode's replay into the second mode's recording): the second mode's fill recorded from its
# header to its replay, its slots read as the replay begins.
D=/var/tmp/s46
while [ "$(grep -c . $D/fillpo-slots.txt 2>/dev/null)" -lt 2 ]; do sleep 0.2; done
sleep 1
kill 23596
pkill -INT -f "perf record -q -e vmscan.*fillpo-2.perf"
sleep 2; rm -f $D/fillpo-2.perf
while ! grep -q '^\[[0-9:]*\] \[2/2\]' $D/fillpo.out; do sleep 0.2; done
label=$(grep -E '^\[[0-9:]+\] \[2/2\]' $D/fillpo.out | tail -1 | sed 's/.*\] //')
perf record -q -e vmscan:mm_vmscan_memcg_reclaim_begin -e vmscan:mm_vmscan_memcg_reclaim_end -a -o $D/fillpo-2.perf > /dev/null 2>&1 &
PERF=$!
while [ "$(grep -c 'replaying' $D/fillpo.out)" -lt 2 ]; do sleep 0.5; done
kill -INT $PERF; wait $PERF
PIDS=$(cat /sys/fs/cgroup/memory/memext-faas/*/cgroup.procs 2>/dev/null)
{ echo "# $label, as the replay begins"; python3 $D/an/slots.py $PIDS | tail -1; } >> $D/fillpo-slots.txt 2>&1
while pgrep -f "bench/faas/run.py.*fillpo" > /dev/null; do sleep 2; done
echo "$(date +%T) end fillpo" >> $D/progress
