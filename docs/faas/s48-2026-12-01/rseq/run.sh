#!/bin/bash
# One trial: the sleeper in a v1 memory cgroup with OOM kills off (as memext
# runs a context), its pages pushed out to swap by lowering the limit, then
# held at a limit where nothing can be reclaimed (memory.swappiness 0: no
# anonymous page is reclaimed, and it has no file pages of its own). A page
# fault of its own waits in the OOM wait there; does its next wakeup?
# Usage (root, a swap area on): run.sh RSEQ   (1: glibc registers rseq; 0: not)
# Prints one line: "alive: ..." (its state: D in mem_cgroup_oom_synchronize
# is the OOM wait) or "DIED: exit N" (139: SIGSEGV), with its usage before
# and the limit it was held at.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CG=/sys/fs/cgroup/memory/memext-rseq-trial
[ -n "$(swapon --noheadings)" ] || { echo "no swap area on"; exit 2; }
[ -x "$HERE/sleeper" ] || gcc -O1 -o "$HERE/sleeper" "$HERE/sleeper.c"
mkdir "$CG" || exit 1
PID=
trap 'echo $((1 << 30)) > $CG/memory.limit_in_bytes 2>/dev/null; [ -n "$PID" ] && kill -9 $PID 2>/dev/null; wait 2>/dev/null; rmdir $CG' EXIT
echo 1 > $CG/memory.oom_control
[ "${1:-1}" = 0 ] && export GLIBC_TUNABLES=glibc.pthread.rseq=0
sh -c "echo \$\$ > $CG/tasks; exec $HERE/sleeper" > /dev/null 2>&1 &
PID=$!
sleep 1.5
before=$(cat $CG/memory.usage_in_bytes)
for l in 4194304 1048576 524288 262144 131072; do echo $l > $CG/memory.limit_in_bytes 2>/dev/null || break; done
echo 0 > $CG/memory.swappiness
held=$(cat $CG/memory.usage_in_bytes)
echo $held > $CG/memory.limit_in_bytes
sleep 3
pushed="usage $((before >> 10)) KiB, held at $((held >> 10)) KiB"
if kill -0 $PID 2>/dev/null; then
  echo "alive: $(awk '/State/{print $2}' /proc/$PID/status) in $(cat /proc/$PID/wchan), $(grep under_oom $CG/memory.oom_control) ($pushed)"
else
  wait $PID; echo "DIED: exit $? ($pushed)"
fi
