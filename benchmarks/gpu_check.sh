#!/usr/bin/env bash
# The prepared GPU check (one call on a CUDA machine where only torch/transformers are preinstalled).
#   1. benchmarks/gpu_grpo.py: GRPO step time and HF generation tokens/s, ~0.5B Qwen2-shaped model.
#   2. The main job (configs/selfplay/tiny-cpu.toml) on CUDA with a larger tiny model (tiny:256x4): the
#      same code path as on CPU (packed warm start, generator GRPO, environment-in-the-loop answerer
#      GRPO, the evaluation on 1,000 v0:test tasks) and the same summary, with both controls (equal-compute,
#      uniform-task) inside the job: on a GPU there is time for them.
# Missing Python packages travel as wheels in .whl/ (see benchmarks/RESULTS.md for the list).
# Writes everything it measures under $OUT (or ./gpu-out when OUT is unset).
set -o pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD/packages/osint-gym/src:$PWD/packages/osint-eval/src:$PWD/packages/osint-selfplay/src${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 OSINT_CACHE_DIR=/tmp/osint-cache TOKENIZERS_PARALLELISM=false
nvidia-smi -L | tee "$OUT/hardware.txt"
python3 -c "import torch, transformers, trl, datasets, pyarrow; print('torch', torch.__version__, 'transformers', transformers.__version__, 'trl', trl.__version__, 'datasets', datasets.__version__, 'pyarrow', pyarrow.__version__)" | tee -a "$OUT/hardware.txt" || exit 1

start=$(date +%s)
timeout "${GRPO_TIMEOUT:-240}" python3 benchmarks/gpu_grpo.py --steps 5 2>&1 | tee "$OUT/gpu_grpo.log"
echo "gpu_grpo.py: $(( $(date +%s) - start )) s" | tee -a "$OUT/hardware.txt"

start=$(date +%s)
timeout "${MAIN_TIMEOUT:-420}" python3 -m osint_selfplay train --config configs/selfplay/tiny-cpu.toml \
  --set output_dir='"/tmp/gpu-main"' model.generator='"tiny:256x4"' model.answerer='"tiny:256x4"' \
  warm_start.control=true answerer.uniform_control=true 2>&1 | tee "$OUT/main.log"
echo "tiny-cpu.toml (tiny:256x4) on CUDA: $(( $(date +%s) - start )) s (exit ${PIPESTATUS[0]})" | tee -a "$OUT/hardware.txt"
cp /tmp/gpu-main/eval/report.md "$OUT/main-report.md" 2>/dev/null
cp /tmp/gpu-main/summary.json "$OUT/main-summary.json" 2>/dev/null
exit 0
