#!/usr/bin/env bash
# Train on a plain machine over SSH: create a virtual environment, install the three packages, run a config.
#
#   scripts/train_standalone.sh [--venv DIR] [--extras vllm,wandb] [--torch SPEC] -- <osint-selfplay train arguments>
#
#   # on a GPU box, from a checkout (the packages are installed from it):
#   scripts/train_standalone.sh --extras vllm,wandb -- --config configs/selfplay/gpu-qwen-1.5b-vllm.toml
#   # the tiny CPU job (torch pinned to the CPU build, as the dev envs do):
#   scripts/train_standalone.sh --torch torch==2.13.0 -- --config configs/selfplay/tiny-cpu.toml
#
# Environment: PYTHON (the interpreter that creates the venv, default python3), PIP_ARGS (extra pip flags).
# A venv that exists is reused (the packages are reinstalled from the checkout). Exits with the trainer's status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-standalone"
EXTRAS=""
TORCH="torch"
PYTHON="${PYTHON:-python3}"

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --venv) VENV="$2"; shift 2 ;;
    --extras) EXTRAS="$2"; shift 2 ;;
    --torch) TORCH="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "train_standalone.sh: unknown option $1 (put osint-selfplay's arguments after --)" >&2; exit 2 ;;
  esac
done
if [[ $# -eq 0 ]]; then
  echo "train_standalone.sh: no osint-selfplay train arguments after -- (e.g. -- --config configs/selfplay/tiny-cpu.toml)" >&2
  exit 2
fi
command -v "$PYTHON" >/dev/null || { echo "train_standalone.sh: $PYTHON not found (set PYTHON=...)" >&2; exit 2; }

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "creating $VENV with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi
SELFPLAY="$ROOT/packages/osint-selfplay"
[[ -n "$EXTRAS" ]] && SELFPLAY="$SELFPLAY[$EXTRAS]"
echo "installing $TORCH and osint-gym, osint-eval[hf], osint-selfplay${EXTRAS:+[$EXTRAS]} from $ROOT"
# shellcheck disable=SC2086  # PIP_ARGS is a list of flags
"$VENV/bin/python" -m pip install --quiet ${PIP_ARGS:-} "$TORCH" "$ROOT/packages/osint-gym" \
  "$ROOT/packages/osint-eval[hf]" "$SELFPLAY"
cd "$ROOT"
exec "$VENV/bin/osint-selfplay" train "$@"
