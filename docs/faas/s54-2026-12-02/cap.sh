#!/bin/bash
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /work/main
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s54/cap old /var/tmp/wt-old new /var/tmp/wt-new
