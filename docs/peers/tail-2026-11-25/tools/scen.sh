#!/bin/bash
# scen.sh OUT MODES [ROUNDS]: issue 15's bursty postgres scenario with psampler beside it
OUT=$1; MODES=$2; ROUNDS=${3:-1}
mkdir -p $OUT
cd /work/main
python3 bench/peers/psampler.py $OUT.samples 100000 &
SP=$!
python3 bench/peers/run.py --cap 512M --noise-containers 12 --noise-total 640M --burst-period 20,40 \
  --warmup 45 --seconds 60 --critical postgres --noise burst --modes "$MODES" --rounds $ROUNDS --out $OUT > $OUT.runlog 2>&1
kill $SP
