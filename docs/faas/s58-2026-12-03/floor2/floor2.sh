while ! grep -q '^done' /var/tmp/s58/room/ab.log; do sleep 10; done
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s58/fix
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s58/floor2 base2:memext+floor=2MiB /var/tmp/s58/head room2:memext+floor=2MiB /var/tmp/s58/fix
