#!/bin/bash
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /work/main
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s55/room2 default:memext /work/main kf192:memext+daemon.keep_free=192MiB /work/main
