export MEMEXT_LOG=info,memext::daemon::events=debug
# 2x2: move_priority nice/idle x resident_cpu_weight none/1000, one build (/work/main with the session's change)
cd /work/main
W=/work/main
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s64/ab2 base:memext $W idle:memext+daemon.move_priority=idle $W \
  res:memext+resident_cpu_weight=1000 $W idleres:memext+daemon.move_priority=idle+resident_cpu_weight=1000 $W
