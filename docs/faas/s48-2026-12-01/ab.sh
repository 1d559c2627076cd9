#!/bin/bash
# A/B on zram: session 47's engine (base: 236f5bf's crates, this session's bench) against this session's
# (calls in a busy stretch recorded, a refused lowering relaxed: 086968e), three rotated rounds.
cd /work/main
echo "$(date +%T) start ab" >> /var/tmp/s48/progress
MEMEXT_LOG=info,memext::daemon::events=debug ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s48/ab base /var/tmp/s48/wt-base calls /work/main
echo "$(date +%T) end ab rc=$?" >> /var/tmp/s48/progress
