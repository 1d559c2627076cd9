#!/bin/bash
export MEMEXT_LOG=info,memext::daemon::events=debug
cd /var/tmp/s55/wtb
ROUNDS=3 bash bench/faas/ab.sh /var/tmp/s55/lf default:memext /var/tmp/s55/wtb lf64:memext+tiers.large_folio_kib=64 /var/tmp/s55/wtb
