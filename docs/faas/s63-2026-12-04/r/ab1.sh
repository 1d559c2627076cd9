export MEMEXT_LOG=info,memext::daemon::events=debug
# base: 4839e4a as it is (resident_cpu_weight unset); res: the same build with resident_cpu_weight = 1000; ideal beside
cd /var/tmp/s63/w
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s63/r base:memext /var/tmp/s63/w res:memext+resident_cpu_weight=1000 /var/tmp/s63/w ideal:ideal /var/tmp/s63/w
