#!/bin/bash
# samples the bench parent's memory.failcnt, usage and limit every 0.1 s while it exists
# (run beside cap.sh, output to /var/tmp/s54/failcnt.txt; here as failcnt.txt.gz)
f=/sys/fs/cgroup/memory/memext-faas
while true; do
  if [ -r $f/memory.failcnt ]; then echo "$(date +%s.%N) $(cat $f/memory.failcnt) $(cat $f/memory.usage_in_bytes) $(cat $f/memory.limit_in_bytes)"; fi
  sleep 0.1
done
