#!/bin/bash
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /work/main
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s49/ab2 warm /work/main base /var/tmp/s49/wt-base major /var/tmp/s49/wt-major
