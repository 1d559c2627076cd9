#!/bin/bash
# bench/faas A/B(/C...): builds, each from its own worktree, ROUNDS rounds on TIERS (default zram)
# each (default 2), the order rotated by one each round; `memext status --json` sampled beside each run.
# Usage: bench/faas/ab.sh OUT NAME TREE [NAME TREE ...]
# e.g. bench/faas/ab.sh /var/tmp/ab old /var/tmp/worktree-at-old new .
# NAME may be LABEL:MODE to run that mode (a memext variant) instead of
# memext, e.g. pageout:memext+daemon.reclaim=page-out; results go to LABEL;
# LABEL:MODE:FLAGS adds run.py flags (comma-separated), e.g. fill:memext:--fill=memext.
# (worktrees: `git worktree add /var/tmp/worktree-at-old COMMIT`; each run
# builds its tree's release binary first). Results: OUT/NAME-rN (a bench/faas
# results directory), OUT/NAME-rN.status (status samples), OUT/ab.log.
# To stop early: `touch OUT/stop`; the run under way finishes and is the last
# (killing a process of this script instead leaves runs overlapping).
set -u
OUT=$(realpath -m "$1")
shift
names=() trees=()
while [ $# -ge 2 ]; do names+=("$1"); trees+=("$2"); shift 2; done
SAMPLER=$(cd "$(dirname "$0")" && pwd)/statsampler.sh
mkdir -p "$OUT"
n=${#names[@]}
for r in $(seq 1 "${ROUNDS:-2}"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(( (k + r - 1) % n ))
    b=${names[$i]%%:*} tree=${trees[$i]} mode=memext flags=()
    [[ ${names[$i]} == *:* ]] && mode=${names[$i]#*:}
    if [[ $mode == *:* ]]; then IFS=, read -r -a flags <<< "${mode#*:}"; mode=${mode%%:*}; fi
    [ -e "$OUT/stop" ] && { echo "stopped" >> "$OUT/ab.log"; exit 0; }
    echo "$(date +%T) $b-r$r" >> "$OUT/ab.log"
    bash "$SAMPLER" "$OUT/$b-r$r.status" &
    sp=$!
    (cd "$tree" && python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 \
       --tiers "${TIERS:-zram}" --modes "$mode" "${flags[@]}" --rounds 1 --out "$OUT/$b-r$r" > "$OUT/$b-r$r.log" 2>&1)
    echo "$(date +%T) $b-r$r rc=$?" >> "$OUT/ab.log"
    kill $sp
  done
done
echo done >> "$OUT/ab.log"
