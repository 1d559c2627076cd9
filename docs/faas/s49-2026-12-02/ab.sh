#!/bin/bash
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /work/main
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s49/ab base /var/tmp/s49/wt-base major /work/main
