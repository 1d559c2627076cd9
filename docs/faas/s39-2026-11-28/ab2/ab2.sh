cd /work/main && ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s39/ab2 base /var/tmp/s39/wt-base callend /work/main
