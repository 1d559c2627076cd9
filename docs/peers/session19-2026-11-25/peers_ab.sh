#!/bin/bash
# Issue 15's scenario (bench/peers, postgres x burst), two builds from their
# own worktrees, rounds alternating, each invocation with its own ideal.
# Usage: peers_ab.sh OUT A_NAME A_TREE B_NAME B_TREE
set -u
OUT=$(realpath -m "$1") A=$2 A_TREE=$3 B=$4 B_TREE=$5
mkdir -p "$OUT"
for r in ${ROUNDS:-1 2}; do
  for b in "$A" "$B"; do
    if [ "$b" = "$A" ]; then tree=$A_TREE; else tree=$B_TREE; fi
    echo "$(date +%T) $b-r$r" >> "$OUT/ab.log"
    (cd "$tree" && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M \
       --burst-period 20,40 --warmup 45 --seconds 60 --critical postgres --noise burst \
       --modes ideal,memext --rounds 1 --out "$OUT/$b-r$r" > "$OUT/$b-r$r.log" 2>&1)
    echo "$(date +%T) $b-r$r rc=$?" >> "$OUT/ab.log"
  done
done
echo done >> "$OUT/ab.log"
