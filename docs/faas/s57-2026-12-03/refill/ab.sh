export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s57/fix
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s57/refill base:memext /var/tmp/s57/base fix:memext /var/tmp/s57/fix
