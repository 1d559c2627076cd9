#!/bin/bash
# bench/faas A/B: two builds, each from its own worktree, two rounds each,
# alternating; `memext status --json` sampled beside each run.
# Usage: ab.sh OUT A_NAME A_TREE B_NAME B_TREE   (run from a checkout that has
# bench/faas/statsampler.sh). This session's runs:
#   ab.sh /var/tmp/faasab  old  <worktree at 3b6f173> new   <this checkout>
#   ab.sh /var/tmp/faasab2 base <worktree at 504fb16> fix   <this checkout>
#   ab.sh /var/tmp/faasab3 fix  <worktree at 3d975c9> lever <this checkout>
# (the first one's sampler path was wrong: no status samples for it).
set -u
OUT=$1 A=$2 A_TREE=$3 B=$4 B_TREE=$5
SAMPLER=$(cd "$(dirname "$0")/../../.." && pwd)/bench/faas/statsampler.sh
mkdir -p "$OUT"
for r in 1 2; do
  for b in "$A" "$B"; do
    if [ "$b" = "$A" ]; then tree=$A_TREE; else tree=$B_TREE; fi
    echo "$(date +%T) $b-r$r" >> "$OUT/ab.log"
    bash "$SAMPLER" "$OUT/$b-r$r.status" &
    sp=$!
    (cd "$tree" && python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 \
       --tiers zram --modes memext --rounds 1 --out "$OUT/$b-r$r" > "$OUT/$b-r$r.log" 2>&1)
    echo "$(date +%T) $b-r$r rc=$?" >> "$OUT/ab.log"
    kill $sp
  done
done
echo done >> "$OUT/ab.log"
