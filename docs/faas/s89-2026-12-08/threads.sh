#!/bin/bash
# Every 2 s, the memext daemon's threads' CPU (utime+stime ticks, comm); the last snapshot per pid kept in OUT.
OUT=$1
while true; do
  for p in $(pgrep -f "release/memext .* daemon"); do
    snap=$(for t in /proc/$p/task/*; do s=$(cat $t/stat 2>/dev/null) || continue; c=$(cat $t/comm 2>/dev/null); set -- ${s##*) }; echo "$(basename $t) $c $(( ${12} + ${13} ))"; done)
    [ -n "$snap" ] && { echo "# $(date +%s) pid $p"; echo "$snap"; } > "$OUT.$p"
  done
  sleep 2
done
