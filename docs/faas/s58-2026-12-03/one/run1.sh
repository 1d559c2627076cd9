export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s58/head
ROUNDS=1 bash bench/faas/ab.sh /var/tmp/s58/one head:memext /var/tmp/s58/head ideal:ideal /var/tmp/s58/head
