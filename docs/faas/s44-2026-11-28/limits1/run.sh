cd /work/main
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers zram,swapfile --modes ideal,limits,memext --rounds 1 --out /var/tmp/s44/limits1 > /var/tmp/s44/limits1.log 2>&1
echo "rc=$?" >> /var/tmp/s44/limits1.log
