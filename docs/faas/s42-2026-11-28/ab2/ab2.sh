#!/bin/bash
# Session 42: touch2 (c0718ad + touch2.diff: no ask at rest entry) vs base (63fc802), 2 rounds rotated.
set -u
cd /work/main
(cd /var/tmp/s42/wt-touch2 && cargo build --release --locked -p memext -p memext-e2e > /var/tmp/s42/build-touch2.log 2>&1)
echo "$(date +%T) built touch2" >> /var/tmp/s42/ab2.progress
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s42/ab2 touch2 /var/tmp/s42/wt-touch2 base /var/tmp/s42/wt-base
echo "$(date +%T) done" >> /var/tmp/s42/ab2.progress
