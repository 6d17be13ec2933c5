#!/bin/bash
# Slotted rows under every fault: the three slotted suites, --slots 4 --slot-pick session.
B=${BIN:-bin}
OUT=${OUT:-results/runs/faults/slots}; mkdir -p $OUT
ARGS="--requests 0 --duration 5s --concurrency 200 --slots 4 --slot-pick session --calibrate=false"
run() { name=$1; bin=$2; shift 2; $B/$bin $ARGS "$@" --output $OUT/$name.json >/dev/null 2>"${TMPDIR:-/tmp}/$name.err"; echo "$name exit $?"; }
for bin in usage_counter_hotspot_baseline usage_settlement_hotspot_baseline usage_aux_counter_hotspot_baseline; do
  s=${bin%_hotspot_baseline}
  for f in restart-postgres@2s crash-postgres@2s lock-timeout=200 statement-timeout=500; do
    for m in sync outbox async-compact; do run $s-$m-${f%%[@=]*} $bin --modes $m --fault $f; done
  done
  run $s-async-compact-pause-flush  $bin --modes async-compact --fault pause-flush@2s+1s
  run $s-async-compact-kill-flusher $bin --modes async-compact --fault kill-flusher@2s
  run $s-redis-kill-consumer        $bin --modes async-compact --queue-backend redis --redis managed --fault kill-consumer@2s
  run $s-redis-crash-redis-always   $bin --modes async-compact --queue-backend redis --redis managed --redis-persist always --fault crash-redis@2s+1s
done
