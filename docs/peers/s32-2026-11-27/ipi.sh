#!/bin/bash
# Who sends the IPIs (TLB shootdowns) while memext serves the burst noise beside Redis:
# perf's ipi:ipi_send_cpumask with call graphs, 20 s, from 70 s into the mode (warm-up under way or the window).
cd /work/main
echo "$(date +%T) start ipi" >> /var/tmp/s32/progress
python3 bench/peers/run.py --noise burst --critical redis --modes memext --rounds 1 --out /var/tmp/s32/ipi > /var/tmp/s32/ipi.out 2>&1 &
sleep 70
perf record -e ipi:ipi_send_cpumask -e ipi:ipi_send_cpu -a -g -o /var/tmp/s32/ipi.data -- sleep 20 > /var/tmp/s32/perf.out 2>&1
wait
echo "$(date +%T) end ipi" >> /var/tmp/s32/progress
