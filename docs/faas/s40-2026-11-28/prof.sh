cd /work/main
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram --modes memext --rounds 1 --out /var/tmp/s40/prof1 > /var/tmp/s40/prof1.log 2>&1 &
pid=$!
until grep -q replaying /var/tmp/s40/prof1.log 2>/dev/null; do sleep 1; done
sleep 40
perf record -a -g -F 199 -o /var/tmp/s40/prof1.perf.data -- sleep 60 > /var/tmp/s40/perf-record.log 2>&1
wait $pid
echo done >> /var/tmp/s40/prof1.log
