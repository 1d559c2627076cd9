cd /work/main
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s40/ab1 base /var/tmp/s40/wt-base mapped /work/main
