cd /work/main
MEMEXT_LOG=info,memext::daemon::events=debug ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s41/ab2 base /var/tmp/s41/wt-base nowarm /var/tmp/s41/wt-nowarm
