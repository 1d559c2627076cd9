cd /work/main
python3 bench/faas/run.py --functions 100 --seconds 180 --settle 20 --time-scale 0.5 --tiers swapfile,zram --modes memext,memext+tiers.page_cluster=0 --rounds 2 --out /var/tmp/s44/pc1 > /var/tmp/s44/pc1.log 2>&1
echo "rc=$?" >> /var/tmp/s44/pc1.log
