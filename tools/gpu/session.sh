#!/bin/bash
# usage (device, checkout root, after .gpu/bin/device-setup.sh from ../shared/gpu):
#   bash tools/gpu/session.sh MINUTES VERSION:GROUP[,GROUP...] ...
# Starts, per VERSION, a copy of the checkout and one background pytest per GROUP (all in
# parallel; JIT workspace per release from /tmp/fienv-VERSION.sh), then -- once every test
# group is done, or MINUTES after the start -- the GPU benchmarks named by "bench-NAME"
# groups (benchmarks/bench_NAME_gpu.py), one at a time, so their timings are not taken under
# other processes' JIT builds. Logs, JUnit XML and JSON lines under /tmp/res;
# `bash tools/gpu/poll.sh SECONDS` waits for them and copies them to $OUT.
set -u
minutes=$1; shift
mkdir -p /tmp/res
deadline=$(( $(date +%s) + minutes * 60 ))
sel() {  # group -> pytest arguments
  case $1 in
    attn) echo "tests/gpu/test_attention_gpu.py -k 'forward_return_lse or extreme or valid_key or masked_rows or without_keys or set_bit or repairs or before_the_keys or empty_states'";;
    gdnfp8) echo "tests/gpu/test_gdn_prefill_gpu.py -k fp8_state_pool";;
    new) echo "tests/gpu/test_mamba_gpu.py tests/gpu/test_topk_gpu.py tests/gpu/test_mla_helpers_gpu.py";;
    samp) echo "tests/gpu/test_sampling_gpu.py";;
    misc) echo "tests/gpu/test_compile_gpu.py tests/gpu/test_head_sizes_gpu.py";;
    compile) echo "tests/gpu/test_compile_gpu.py -k rmsnorm";;
    mamba) echo "tests/gpu/test_mamba_gpu.py";;
    topk) echo "tests/gpu/test_topk_gpu.py -o faulthandler_timeout=240";;
    mlah) echo "tests/gpu/test_mla_helpers_gpu.py";;
    attnk) echo "tests/gpu/test_attn_kernels_gpu.py";;
    gdnk) echo "tests/gpu/test_gdn_kernels_gpu.py tests/gpu/test_gdn_decode_gpu.py";;
    mtp) echo "tests/gpu/test_gdn_kernels_gpu.py";;
    *) echo "";;
  esac
}
benches=()
for spec in "$@"; do
  v=${spec%%:*}; groups=${spec#*:}
  # a second call for a release reuses its copy (its tests may be running from it)
  [ -d /tmp/repo-$v ] || { mkdir -p /tmp/repo-$v; cp -r src tests tools benchmarks pyproject.toml /tmp/repo-$v/; }
  for g in ${groups//,/ }; do
    case $g in bench-*) benches+=("$v:${g#bench-}"); continue;; esac
    args=$(sel "$g"); [ -n "$args" ] || { echo "unknown group $g"; continue; }
    touch /tmp/res/running-$v-$g
    setsid nohup bash -c "
      source /tmp/fienv-$v.sh; cd /tmp/repo-$v
      export FI_COMPAT_GPU_REPORT=/tmp/res/$g-$v.jsonl
      echo start \$(date -u +%T) > /tmp/res/$g-$v.log
      python3 -m pytest -m gpu -q -p no:cacheprovider -rA $args --junitxml=/tmp/res/$g-$v.xml >> /tmp/res/$g-$v.log 2>&1
      echo rc=\$? end \$(date -u +%T) >> /tmp/res/$g-$v.log
      rm -f /tmp/res/running-$v-$g
    " > /dev/null 2>&1 < /dev/null &
    echo "launched $v $g"
  done
done
[ ${#benches[@]} -gt 0 ] || exit 0
touch /tmp/res/bench-queued
setsid nohup bash -c "
  while ls /tmp/res/running-* > /dev/null 2>&1 && [ \$(date +%s) -lt $deadline ]; do sleep 5; done
  echo benches start \$(date -u +%T) >> /tmp/res/bench.log
  for b in ${benches[*]}; do
    v=\${b%%:*}; name=\${b#*:}
    ( source /tmp/fienv-\$v.sh; cd /tmp/repo-\$v
      echo == \$b \$(date -u +%T) >> /tmp/res/bench.log
      PYTHONPATH=src:\$PYTHONPATH timeout 300 python3 benchmarks/bench_\${name}_gpu.py --json /tmp/res/bench-\$name-\$v.json >> /tmp/res/bench.log 2>&1
      echo rc=\$? >> /tmp/res/bench.log )
  done
  echo benches end \$(date -u +%T) >> /tmp/res/bench.log
  touch /tmp/res/bench-done
" > /dev/null 2>&1 < /dev/null &
echo "benches queued: ${benches[*]:-none}"
