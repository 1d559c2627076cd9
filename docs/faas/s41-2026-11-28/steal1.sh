cd /work/main
( while [ ! -e /var/tmp/s41/steal1.done ]; do echo "$(date +%s.%N) $(head -1 /proc/stat)"; sleep 1; done > /var/tmp/s41/steal1.stat ) &
MEMEXT_LOG=info,memext::daemon::events=debug python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram --modes ideal,memext --rounds 1 --out /var/tmp/s41/steal1 > /var/tmp/s41/steal1.log 2>&1
touch /var/tmp/s41/steal1.done
