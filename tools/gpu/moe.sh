#!/bin/bash
# usage (device, checkout root, after .gpu/bin/device-setup.sh from ../shared/gpu): bash tools/gpu/moe.sh VERSION JOBS [NICE]
# background: restricted fused_moe_90 build (tools/gpu/build_moe_subset.py, installed in the AOT slot),
# then tests/gpu/test_fused_moe_gpu.py. Logs and results in /tmp/res/moe-*.
v=$1; j=$2; n=${3:-0}
mkdir -p /tmp/res /tmp/repo-$v
cp -r src tests tools pyproject.toml /tmp/repo-$v/
source /tmp/fienv-$v.sh
export MAX_JOBS=$j FI_COMPAT_GPU_REPORT=/tmp/res/moe-$v.jsonl
cd /tmp/repo-$v
setsid nohup nice -n $n bash -c "
  t0=\$(date +%s); echo start \$(date -u +%T) >> /tmp/res/moe-build-$v.log
  python3 tools/gpu/build_moe_subset.py >> /tmp/res/moe-build-$v.log 2>&1; rc=\$?; t1=\$(date +%s)
  echo build_rc=\$rc build_s=\$((t1-t0)) end \$(date -u +%T) >> /tmp/res/moe-build-$v.log
  python3 -m pytest -m gpu -q -p no:cacheprovider -rA tests/gpu/test_fused_moe_gpu.py --junitxml=/tmp/res/moe-$v.xml > /tmp/res/moe-$v.log 2>&1
  echo rc=\$? end \$(date -u +%T) >> /tmp/res/moe-$v.log
" > /dev/null 2>&1 < /dev/null &
echo launched moe $v jobs=$j nice=$n
