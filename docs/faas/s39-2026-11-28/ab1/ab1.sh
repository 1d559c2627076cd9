cd /work/main && ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s39/ab1 base /var/tmp/s39/wt-base noslack /work/main
