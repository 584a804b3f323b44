#!/bin/bash
# usage (device): bash tools/gpu/moe-poll.sh -> progress of the restricted builds and tests; copies /tmp/res to $OUT
date -u +%T
for v in 0.6.7 0.7.4; do
  [ -d /tmp/ws-$v ] || continue
  objs=$(find /tmp/ws-$v -path '*fused_moe_90*' -name '*.o' 2>/dev/null | wc -l)
  so=$(find /tmp/ws-$v /tmp/fi-$v/flashinfer/data/aot -name 'fused_moe_90.so' 2>/dev/null | head -2 | tr '\n' ' ')
  echo "== $v: $objs objects; so: ${so:-none}"
  tail -3 /tmp/res/moe-build-$v.log 2>/dev/null
  tail -5 /tmp/res/moe-$v.log 2>/dev/null
done
free -g | sed -n 2p
echo "compilers running: $(ps aux | grep -c '[c]icc\|[p]txas\|[c]c1plus')"
[ -n "${OUT:-}" ] && cp /tmp/res/* $OUT/ 2>/dev/null
true
