#!/bin/bash
# ab.sh: the scenario, alternating the build before (worktree at HEAD) and this one
set -u
for r in 1 2 3; do
  for b in old new; do
    [ $b = old ] && dir=/var/tmp/mx/old || dir=/work/main
    out=/var/tmp/mx/s17/ab-$b-r$r
    (cd $dir && python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 \
      --warmup 45 --seconds 60 --critical postgres --noise burst --modes ideal,memext,memext+fast_wakes=true --out $out > $out.runlog 2>&1)
    grep "postgres x burst |" $out/summary.md >> /var/tmp/mx/s17/ab.txt
  done
done
