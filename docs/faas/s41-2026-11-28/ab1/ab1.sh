cd /work/main
MEMEXT_LOG=info,memext::daemon::events=debug ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s41/ab1 base /var/tmp/s41/wt-base learn /var/tmp/s41/wt-new
