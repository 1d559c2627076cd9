#!/bin/bash
# The bench/peers pairs of session 67: PostgreSQL (critical) beside `burst` noise, memext only, three
# rounds, the two builds alternated (A first in odd rounds), each run its own invocation from its
# build's worktree WT_PREFIX-NAME. As run: `peers-ab.sh /var/tmp/s67/peers /var/tmp/s67/wt base one`
# and `peers-ab.sh /var/tmp/s67/peers2 /var/tmp/s67/wt gate base`.
set -u
[ $# -eq 4 ] || { echo "usage: peers-ab.sh OUT WT_PREFIX A B" >&2; exit 2; }
OUT=$1 WT=$2 A=$3 B=$4
mkdir -p "$OUT"
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="$A $B"; else order="$B $A"; fi
  for b in $order; do
    echo "$(date +%T) $b-r$r" >> "$OUT/ab.log"
    (cd "$WT-$b" && python3 bench/peers/run.py --critical postgres --noise burst --modes memext \
       --out "$OUT/$b-r$r" > "$OUT/$b-r$r.log" 2>&1)
    echo "$(date +%T) $b-r$r rc=$?" >> "$OUT/ab.log"
  done
done
echo done >> "$OUT/ab.log"
