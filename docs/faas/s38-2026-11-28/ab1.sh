#!/bin/bash
cd /work/main
echo "$(date +%T) start ab1" >> /var/tmp/s38/progress
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s38/ab1 base /var/tmp/s38/wt-base whole /work/main
echo "$(date +%T) end ab1" >> /var/tmp/s38/progress
