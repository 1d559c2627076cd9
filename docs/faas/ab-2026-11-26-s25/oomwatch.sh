#!/bin/bash
# Logs every cgroup under $2 (default memext-faas) with under_oom 1, once a second, until $1 exists.
P=${2:-memext-faas}
while [ ! -e "$1" ]; do
  for f in /sys/fs/cgroup/memory/$P/*/memory.oom_control; do
    [ -e "$f" ] || continue
    grep -q "under_oom 1" "$f" 2>/dev/null && echo "$(date +%T.%N | cut -c1-12) $(basename $(dirname $f))"
  done
  sleep 1
done
