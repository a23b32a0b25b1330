#!/usr/bin/env bash
# One sitting on a machine with a CUDA GPU, as one command (for a machine held only briefly:
# one start, one call).
#
#   bash benchmarks/gpu_sitting.sh              # on the GPU machine: OUT is the folder to copy back
#   DEVICE=cpu SMALL=1 OUT=/tmp/sit bash benchmarks/gpu_sitting.sh   # the same steps, small, here
#
# 1. installs the checkout into the machine's own Python (no registry there: --no-deps,
#    --no-index; its torch, attrs, pluggy, rich, typer, safetensors and onnx are used);
# 2. `gpu_metrics.py` (the speed figures; STEPS=a,b,c for some of its steps) bounded to
#    METRICS_S seconds;
# 3. `gpu_paper_scale.py` with what is left of TOTAL_S, resumed from RESUME when given, its
#    score cache packed into at most 4 archives in OUT (with the two record files and the log:
#    8 files to copy back in all).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT names the folder to copy back}
DEVICE=${DEVICE:-cuda}
TOTAL_S=${TOTAL_S:-560}
METRICS_S=${METRICS_S:-440}
start=$(date +%s)
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
exec > >(tee -a "$OUT/sitting.log") 2>&1
small=()
[[ -n "${SMALL:-}" ]] && small=(--small --workers 1)
psmall=()
[[ -n "${SMALL:-}" ]] && psmall=(--small)
PY=${PY:-python3}
if [[ "$DEVICE" == cuda* ]]; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv || true
  nproc
  $PY -m pip install -q --no-deps --no-build-isolation --no-index -e . \
    || $PY -m pip install -q --no-deps --no-build-isolation --no-index . || exit 2
fi
$PY -c "import torch, nasforge; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
steps=()
[[ -n "${STEPS:-}" ]] && steps=(--steps "$STEPS")
timeout "$METRICS_S" $PY benchmarks/gpu_metrics.py --device "$DEVICE" "${small[@]}" "${steps[@]}" --out "$OUT"
echo "gpu_metrics exit $?, $(($(date +%s) - start)) s into the sitting"
left=$((TOTAL_S - ($(date +%s) - start) - 45))
if ((left >= 30)); then
  resume=()
  [[ -n "${RESUME:-}" ]] && resume=(--resume "$RESUME")
  timeout $((left + 40)) $PY benchmarks/gpu_paper_scale.py --device "$DEVICE" "${psmall[@]}" --out "$OUT" \
    --state /tmp/paper-scale-state --time-limit "$left" --max-files 4 "${resume[@]}"
  echo "gpu_paper_scale exit $?"
else
  echo "no time left for gpu_paper_scale ($left s)"
fi
echo "sitting done in $(($(date +%s) - start)) s"
