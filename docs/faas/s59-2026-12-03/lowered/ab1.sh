export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s59/fix
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s59/ab1 base:memext /var/tmp/s59/base fix:memext /var/tmp/s59/fix
