cd /work/main
echo $$ > /var/tmp/s43/ab1.pgid
ROUNDS=1 TIERS=swapfile,zram bash bench/faas/ab.sh /var/tmp/s43/ab1 base /var/tmp/s43/wt-base fix /work/main
