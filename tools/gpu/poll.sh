#!/bin/bash
# usage (device): bash tools/gpu/poll.sh SECONDS
# Waits up to SECONDS for the chains of tools/gpu/session.sh (until every test group is
# done, and the benchmarks too where any were queued), prints progress, and copies
# /tmp/res to $OUT as one archive plus the benchmark JSON files (at most 8 come back).
set -u
end=$(( $(date +%s) + $1 ))
busy() { ls /tmp/res/running-* > /dev/null 2>&1 || { [ -f /tmp/res/bench-queued ] && [ ! -f /tmp/res/bench-done ]; }; }
while busy && [ $(date +%s) -lt $end ]; do sleep 10; done
date -u +%T; ls /tmp/res/running-* 2>/dev/null | sed 's#.*/running-#running: #'
for f in /tmp/res/*.log; do echo "== $f"; tail -3 "$f"; done
if [ -n "${OUT:-}" ]; then
  tar -czf "$OUT/res.tgz" -C /tmp res
  cp /tmp/res/bench-*.json "$OUT/" 2>/dev/null
fi
true
