cd /work/main
echo $$ > /var/tmp/s43/ab2.pgid
ROUNDS=1 TIERS=swapfile,zram bash bench/faas/ab.sh /var/tmp/s43/ab2 fix /work/main base /var/tmp/s43/wt-base
