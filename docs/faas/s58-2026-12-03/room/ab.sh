export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s58/fix
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s58/room base:memext /var/tmp/s58/head room:memext /var/tmp/s58/fix room2:memext+floor=2MiB /var/tmp/s58/fix
