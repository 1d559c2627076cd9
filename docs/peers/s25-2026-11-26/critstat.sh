#!/bin/bash
# Every 2 s until $1 exists: each /memext-peers container's usage and LRU split (MiB), largest first.
while [ ! -e "$1" ]; do
  for d in /sys/fs/cgroup/memory/memext-peers/*/; do
    [ -e $d/memory.stat ] || continue
    awk -v id=$(basename $d | cut -c1-8) -v u=$(cat $d/memory.usage_in_bytes) '
      /^total_(rss|cache|shmem|active_anon|inactive_anon|active_file|inactive_file) / {v[$1]=int($2/1048576)}
      END {printf "%s %s u%d rss%d cache%d shmem%d aa%d ia%d af%d if%d\n", strftime("%T"), id, u/1048576, v["total_rss"], v["total_cache"], v["total_shmem"], v["total_active_anon"], v["total_inactive_anon"], v["total_active_file"], v["total_inactive_file"]}' $d/memory.stat
  done
  sleep 2
done
