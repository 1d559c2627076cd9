#!/bin/bash
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s55/wtb
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s55/ideal ideal:ideal /var/tmp/s55/wtb
