export MEMEXT_LOG=info,memext::daemon::events=debug
# two more rounds of base / res (same build 4839e4a), the order starting with res
cd /var/tmp/s63/w
ROUNDS=2 bash bench/faas/ab.sh /var/tmp/s63/r2 res:memext+resident_cpu_weight=1000 /var/tmp/s63/w base:memext /var/tmp/s63/w
