#!/bin/bash
# Every 2 s: "# EPOCH" then "CGROUP USAGE" for each /memext-faas child (v1 memory).
out=$1
while true; do
  echo "# $(date +%s.%N)" >> $out
  for d in /sys/fs/cgroup/memory/memext-faas/*/; do
    [ -f $d/memory.usage_in_bytes ] && echo "/memext-faas/$(basename $d) $(cat $d/memory.usage_in_bytes 2>/dev/null)"
  done >> $out
  sleep 2
done
