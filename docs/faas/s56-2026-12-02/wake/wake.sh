export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s56/fix
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s56/wake base:memext /var/tmp/s56/base fix:memext /var/tmp/s56/fix
