#!/bin/bash
# Session 42: base (63fc802, before touches) vs touch (c0718ad), 3 rounds rotated, then one ideal run.
set -u
cd /work/main
for x in base:63fc802 touch:c0718ad; do
  n=${x%%:*} c=${x#*:}
  [ -d /var/tmp/s42/wt-$n ] || git worktree add -f /var/tmp/s42/wt-$n $c > /dev/null 2>&1
  (cd /var/tmp/s42/wt-$n && cargo build --release --locked -p memext -p memext-e2e > /var/tmp/s42/build-$n.log 2>&1)
done
echo "$(date +%T) built" >> /var/tmp/s42/ab1.progress
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s42/ab1 base /var/tmp/s42/wt-base touch /var/tmp/s42/wt-touch
echo "$(date +%T) ab done" >> /var/tmp/s42/ab1.progress
ROUNDS=1 bash bench/faas/ab.sh /var/tmp/s42/ideal1 ideal:ideal /var/tmp/s42/wt-touch
echo "$(date +%T) all done" >> /var/tmp/s42/ab1.progress
