#!/bin/bash
cd /work/main
echo "$(date +%T) start ab2" >> /var/tmp/s38/progress
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s38/ab2 base /var/tmp/s38/wt-base gate /work/main
echo "$(date +%T) end ab2" >> /var/tmp/s38/progress
