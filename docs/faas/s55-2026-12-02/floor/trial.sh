#!/bin/bash
# One trial: bench/faas's function (python, heap H MiB, serve_forever polling every 0.5 s)
# in a v1 memory cgroup with OOM kills off; limit lowered in 8 MiB steps to FLOOR bytes
# (or to "kmem+X": kmem usage + X bytes at the moment); held 6 s; alive or died.
# Usage: trial.sh FLOOR_SPEC HEAP_MIB
set -u
CG=/sys/fs/cgroup/memory/memext-s55-trial
mkdir "$CG" || exit 1
PID=
trap 'echo $((1 << 30)) > $CG/memory.limit_in_bytes 2>/dev/null; [ -n "$PID" ] && kill -9 $PID 2>/dev/null; wait 2>/dev/null; rmdir $CG' EXIT
echo 1 > $CG/memory.oom_control
S=/tmp/s55-fn-$$.sock
sh -c "echo \$\$ > $CG/tasks; exec python3 /work/main/bench/faas/function.py --socket $S --heap-mib $2" > /dev/null 2>&1 &
PID=$!
for i in $(seq 100); do [ -S $S ] && break; sleep 0.1; done
sleep 1
before=$(cat $CG/memory.usage_in_bytes)
kmem=$(cat $CG/memory.kmem.usage_in_bytes)
case $1 in kmem+*) floor=$((kmem + ${1#kmem+}));; *) floor=$1;; esac
l=$before
while [ $l -gt $floor ]; do l=$((l - 8388608)); [ $l -lt $floor ] && l=$floor; echo $l > $CG/memory.limit_in_bytes 2>/dev/null || { echo refused at $l >&2; break; }; done
held=$(cat $CG/memory.usage_in_bytes); kh=$(cat $CG/memory.kmem.usage_in_bytes)
st=$(awk '$1=="rss"||$1=="cache"||$1=="swap"{printf "%s %d ", $1, $2/1024}' $CG/memory.stat)
sleep 6
info="before $((before>>10)) KiB kmem $((kmem>>10)); floor $((floor>>10)) limit $(( $(cat $CG/memory.limit_in_bytes) >> 10)) usage $((held>>10)) kmem $((kh>>10)) $st KiB; failcnt $(cat $CG/memory.failcnt)"
if kill -0 $PID 2>/dev/null; then
  echo "alive: $(awk '/State/{print $2}' /proc/$PID/status) $(cat /proc/$PID/wchan) ($info)"
else
  wait $PID; echo "DIED: exit $? ($info)"
fi
rm -f $S
