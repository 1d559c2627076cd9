#!/bin/bash
# One trial with a real bench/faas function container (private engine, cgroup parent /memext-s55):
# OOM kills off, limit lowered in 8 MiB steps to FLOOR (bytes, or kmem+X), held 6 s.
# Usage: ctrial.sh FLOOR_SPEC HEAP_MIB
set -u
D="docker -H unix:///var/tmp/s55/engine/docker.sock"
N=s55fn$$
trap '$D rm -f $N >/dev/null 2>&1' EXIT
$D run -d --name $N --network none -v /var/tmp/s55/sock:/sock -v /work/main/bench/faas:/faas:ro memext-base:bookworm-2 \
  python3 /faas/function.py --socket /sock/$N.sock --heap-mib $2 >/dev/null
ID=$($D inspect -f '{{.Id}}' $N)
CG=/sys/fs/cgroup/memory/memext-s55/$ID
for i in $(seq 100); do [ -S sock/$N.sock ] && break; sleep 0.1; done
sleep 1
[ -n "${CALL:-}" ] && curl -s --unix-socket sock/$N.sock http://x/invoke >/dev/null; [ -n "${CALL:-}" ] && curl -s --unix-socket sock/$N.sock http://x/invoke >/dev/null
echo 1 > $CG/memory.oom_control
before=$(cat $CG/memory.usage_in_bytes); kmem=$(cat $CG/memory.kmem.usage_in_bytes)
case $1 in kmem+*) floor=$((kmem + ${1#kmem+}));; *) floor=$1;; esac
l=$before
while [ $l -gt $floor ]; do l=$((l - 8388608)); [ $l -lt $floor ] && l=$floor; echo $l > $CG/memory.limit_in_bytes 2>/dev/null || { echo refused at $l >&2; break; }; done
held=$(cat $CG/memory.usage_in_bytes); kh=$(cat $CG/memory.kmem.usage_in_bytes)
st=$(awk '$1=="rss"||$1=="cache"||$1=="swap"||$1=="shmem"||$1=="mapped_file"{printf "%s %d ", $1, $2/1024}' $CG/memory.stat)
sleep 6
info="before $((before>>10)) KiB kmem $((kmem>>10)); floor $((floor>>10)) limit $(( $(cat $CG/memory.limit_in_bytes) >> 10)) usage $((held>>10)) kmem $((kh>>10)) $st KiB; failcnt $(cat $CG/memory.failcnt)"
st=$($D inspect -f '{{.State.Running}} {{.State.ExitCode}} {{.State.OOMKilled}}' $N)
echo "$st ($info)"
