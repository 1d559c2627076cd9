cd /var/tmp/s41/wt-new
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram --modes memext --rounds 1 --out /var/tmp/s41/prof1 > /var/tmp/s41/prof1.log 2>&1 &
pid=$!
until grep -q replaying /var/tmp/s41/prof1.log 2>/dev/null; do sleep 1; done
sleep 30
perf record -a -g -F 999 -o /var/tmp/s41/prof1.perf.data -- sleep 90 > /var/tmp/s41/perf-record.log 2>&1
wait $pid
echo done >> /var/tmp/s41/prof1.log
