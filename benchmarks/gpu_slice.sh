#!/usr/bin/env bash
# One step of a lent-GPU slice (issue 18), run in the repository root of a device machine.
#
# A slice is short (device minutes are few, a command runs at most 10 minutes, files come back only
# through $OUT), so each step is one command that prepares the bare machine itself and ends well inside
# its limit. Prepare once on the CPU machine with `bash benchmarks/gpu_prepare.sh` (the folders are git-ignored):
#   .whl/                 wheels the device image lacks (fla-core for CAPS, PyWavelets for WPMixer, reformer-pytorch
#                         and its needs for Reformer; the list and versions live in gpu_prepare.sh)
#   .gpu/datasets.tar.xz  the data mirror's SHA256SUMS, ETT-small and weather
#   .gpu/grid.tar.gz      the grid archive a previous `grid` step left in $OUT (absent on the first slice)
# and carry both: run(command="bash benchmarks/gpu_slice.sh exact", carry=[".whl", ".gpu"]).
#
# Steps:
#   exact     CUDA exactness tests: fla and chunked kernels against the float64 reference, run.py on CUDA
#   bench     bench_models.py rows (eager / compiled / fla) for CAPS and PatchTST at ETTh1 H = 96 and 720,
#             the kernel over T = 97 .. 16 384, and the step profile before (chunked, eager) and after (fla,
#             compiled)
#   grid      the paper recipe for CAPS and LinAttn+RoPE (seed 2026) in docs/results/paper_recipe (cells
#             committed there, from the CPU or earlier slices, are skipped), resumed from .gpu/grid.tar.gz, for
#             GRID_MINUTES (default 8) minutes; the archive comes back as $OUT/grid.tar.gz: restore it here
#             with `python -m compare restore grid.tar.gz --out docs/results/paper_recipe --force` (it holds
#             the committed records too) and commit the new records
#   official  the same for "CAPS (official numerics)" (their arithmetic, our loop) and "CAPS (official)" (their
#             arithmetic and loop) on ETTh1 and ETTh2, into its own archive $OUT/official.tar.gz (carried back
#             as .gpu/official.tar.gz)
#   session   one whole lent slice in one command (a 15-minute lease): the paper-recipe grid on ETTh1/ETTh2
#             (GRID_DATA) with all 16 cells at once (GRID_JOBS 16) and the chunked kernel (GRID_IMPL) until
#             SESSION_SECONDS (default 560) from the start, packed as for `grid`; exact and bench are
#             steps of their own (measured on 2026-11-27: docs/results/gpu_slice_2026-11-27)
#   tune      fla's autotuning at CAPS's shapes (benchmarks/fla_autotune.py, TUNE_SECONDS, default 540),
#             its config files back as $OUT/fla_configs.tar.gz
#   arithmetic  issue 19 part 4 at the full recipe: paper CAPS and each official-arithmetic switch alone on
#             ETTh1 and ETTm1, H = 96 and 336, seeds 2021-2023, into $OUT/arithmetic.tar.gz (carried back as
#             .gpu/arithmetic.tar.gz); path 1's global max is left out: on the same weights it changes CAPS's
#             forecasts by under 3e-7 of their size (docs/results/switch_sensitivity.txt), so it trains the
#             paper's model; the mark epsilon stays for ETTm1, where it turns still marks into 1e8
#   baselines PatchTST and TimesNet at their TSLib scripts in the eight ETTh1/ETTh2 paper-recipe cells (issue 61:
#             about 40 and 55 h of one CPU core), into docs/results/paper_recipe beside CAPS, LinAttn+RoPE, DLinear
#             and iTransformer, for GRID_MINUTES (default 8); back as $OUT/baselines.tar.gz (carried back as
#             .gpu/baselines.tar.gz); restore it with `python -m compare restore baselines.tar.gz --out
#             docs/results/paper_recipe --force` and commit the new records
#   zoo       the model-zoo rows too slow for the 2-core CPU (issue 16: 8-26 min an epoch there with both
#             cores, up to 10-30 epochs), each with its TSLib script recipe on ETTh1, H = 96, into
#             docs/results/zoo_ETTh1_gpu ($OUT/zoo.tar.gz; ZOO_MODELS overrides the list). Mamba runs only
#             where mamba_ssm imports (else its one-line error, a failed run)
# Environment: GRID_DATA (datasets of the grid, default "ETTh1 ETTh2 ETTm1 ETTm2 Weather"), GRID_JOBS
# (parallel runs on the GPU, default 8; session 16), GRID_WORKERS (data-loader workers per run, default 0: the
# data sets fit in memory), GRID_IMPL (session's --caps_impl, default chunked), GRID_MINUTES, GRID_EXTRA
# (run.py flags added to every run of the grid, e.g. "--caps_impl chunked" should the exact step fail for fla;
# the runs' settings record them).
set -uo pipefail

step="${1:?usage: bash benchmarks/gpu_slice.sh exact|bench|grid|official|arithmetic|session|baselines|tune|zoo}"
started=$SECONDS
out="${OUT:?OUT is unset: run this through the device tool, or export OUT=<folder for the results>}"
export PYTHONUNBUFFERED=1

if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .whl/*.whl || { echo "gpu_slice: installing .whl/*.whl failed" >&2; exit 2; }
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
if [ -f .gpu/datasets.tar.xz ]; then
    mkdir -p /tmp/datasets && tar -C /tmp/datasets -xJf .gpu/datasets.tar.xz \
        && (cd /tmp/datasets && sha256sum --quiet -c SHA256SUMS) \
        || { echo "gpu_slice: .gpu/datasets.tar.xz does not unpack to the mirror's checksums" >&2; exit 2; }
    export TSLIB_DATA_MIRROR=/tmp/datasets
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
python3 -c "import torch, sys; print('torch', torch.__version__, 'python', sys.version.split()[0])" \
    | tee -a "$out/device.txt"
git log -1 --format='commit %h %cs' 2>/dev/null | tee -a "$out/device.txt"
# fla autotunes each Triton kernel on its first call in a process (minutes on a fresh machine, seen on the
# first slice). Kernels with configs tuned earlier for this GPU (benchmarks/fla_configs/<GPU>, from the `tune`
# step) use those; every other kernel keeps one config by a fixed rule (CAPS_FLA_AUTOTUNE=0; `tune` sets 1).
gpu=$(python3 -c "import torch, re; print(re.sub('[^0-9A-Za-z]+', '_', torch.cuda.get_device_name()))" 2>/dev/null || echo no_cuda)
export CAPS_FLA_AUTOTUNE="${CAPS_FLA_AUTOTUNE:-0}"
if [ -d "benchmarks/fla_configs/$gpu" ]; then
    export FLA_CACHE_MODE=strict FLA_CONFIG_DIR="$PWD/benchmarks/fla_configs/$gpu"
fi
echo "gpu_slice: CAPS_FLA_AUTOTUNE=$CAPS_FLA_AUTOTUNE, fla config files: ${FLA_CONFIG_DIR:-none}" | tee -a "$out/device.txt"

# Run the comparison runner for one time-limited slice of a grid and pack its folder into $OUT/NAME.tar.gz.
# The folder is RESULTS_DIR where set (a committed results folder: the runner skips the runs recorded there,
# e.g. cells run on the CPU), else /tmp/NAME; an archive of an earlier slice (.gpu/NAME.tar.gz) replaces it.
slice_of_grid() {
    local name="$1"; shift
    local folder="${RESULTS_DIR:-/tmp/$name}"
    if [ -f ".gpu/$name.tar.gz" ]; then
        python3 -m compare restore ".gpu/$name.tar.gz" --out "$folder" --force || exit 2
    fi
    python3 -m compare --root "${TSLIB_DATA_MIRROR:?no datasets: carry .gpu with datasets.tar.xz}" \
        --out "$folder" --jobs "${GRID_JOBS:-8}" --num_workers "${GRID_WORKERS:-0}" --no-timing \
        --time_budget "${GRID_MINUTES:-8}" --grace 45 --min-start 90 ${GRID_EXTRA:+--extra="$GRID_EXTRA"} "$@" 2>&1 | tee "$out/$name.log"
    local status=${PIPESTATUS[0]}
    # Files come back from $OUT only up to 16 MiB each: a slim archive (finished runs keep their records and
    # logs, not their weights and prediction arrays) with no file over 4 MiB (an interrupted run whose
    # last.pth is larger restarts next slice); if it is still too large, interrupted runs lose last.pth too.
    python3 -m compare pack --out "$folder" "$out/$name.tar.gz" --slim --max-file-mib 4
    if [ "$(stat -c %s "$out/$name.tar.gz")" -gt $(( 15 * 2**20 )) ]; then
        echo "gpu_slice: $name.tar.gz is over 15 MiB; packing again without any file over 0.25 MiB"
        python3 -m compare pack --out "$folder" "$out/$name.tar.gz" --slim --max-file-mib 0.25
    fi
    cp "$folder/table.md" "$out/$name.md" 2>/dev/null
    echo "gpu_slice: $name runner exit $status (3: runs remain, 0: complete, 1: some failed)"
    return "$status"
}

# Shared by the steps. The exactness tests and the kernel benchmark run with TRITON_F32_DEFAULT=ieee:
# Triton's float32 dots default to TF32 (~1e-3 relative), and both check fla against float64 at 1e-5.
EXACT_TESTS=(tests/layers/test_caps_fla.py tests/layers/test_caps_cuda.py tests/exp/test_run_cuda.py)
KERNEL_BENCH=(benchmarks/bench_caps_attention.py --device cuda --T 97 816 4096 16384 --chunks 64)
PAPER_GRID_MODELS=(--models CAPS LinAttn+RoPE)
PAPER_BASELINES=(--models PatchTST TimesNet)

case "$step" in
exact)
    TRITON_F32_DEFAULT=ieee python3 -m pytest -p no:cacheprovider -q -x "${EXACT_TESTS[@]}" 2>&1 | tee "$out/exact.log"
    ;;
bench)
    # CAPS: --caps_impl auto, the chunked kernel on CUDA
    python3 benchmarks/bench_models.py --device cuda --data ETTh1 --models CAPS PatchTST --pred_lens 96 720 \
        --variant "CAPS chunked compiled=CAPS:--caps_impl chunked --compile" \
        --variant "CAPS fla=CAPS:--caps_impl fla" \
        --variant "CAPS fla compiled=CAPS:--caps_impl fla --compile" \
        --variant "CAPS fla graphs=CAPS:--caps_impl fla --compile --compile_mode reduce-overhead" \
        2>&1 | tee "$out/bench_models.txt"
    TRITON_F32_DEFAULT=ieee python3 "${KERNEL_BENCH[@]}" 2>&1 | tee "$out/bench_kernel.txt"
    python3 benchmarks/profile_caps_step.py --device cuda --pred_len 720 --impl chunked \
        2>&1 | tee "$out/profile_before.txt"
    python3 benchmarks/profile_caps_step.py --device cuda --pred_len 720 --impl fla --compile \
        2>&1 | tee "$out/profile_after.txt"
    ;;
grid)
    # shellcheck disable=SC2086  # GRID_DATA is a list of dataset names
    RESULTS_DIR=docs/results/paper_recipe slice_of_grid grid --data ${GRID_DATA:-ETTh1 ETTh2 ETTm1 ETTm2 Weather} \
        "${PAPER_GRID_MODELS[@]}"
    exit $?
    ;;
official)
    slice_of_grid official --data ETTh1 ETTh2 --models "CAPS (official numerics)" "CAPS (official)"
    exit $?
    ;;
session)
    # One whole lent slice for the paper-recipe grid (issue 18 part 1, never started in the first two
    # slices: their exactness tests and benchmarks took the time). Those were measured on 2026-11-27
    # (docs/results/gpu_slice_2026-11-27); rerun them with the `exact` and `bench` steps after a change
    # to the CUDA path. The grid runs the chunked kernel (GRID_IMPL), which passed every CUDA test there,
    # with every ETTh cell at once (GRID_JOBS 16: the small runs are launch-bound, so the GPU is shared
    # best by many processes) until SESSION_SECONDS (default 560) from the start, less 30 s to pack.
    left=$(( ${SESSION_SECONDS:-560} - (SECONDS - started) - 30 ))
    echo "gpu_slice: ${left} s for the grid (--caps_impl ${GRID_IMPL:-chunked})"
    [ "$left" -ge 180 ] || { echo "gpu_slice: under 180 s left, no grid slice" >&2; exit 2; }
    GRID_MINUTES=$(python3 -c "print(round($left / 60, 2))") GRID_JOBS="${GRID_JOBS:-16}" \
        GRID_EXTRA="--caps_impl ${GRID_IMPL:-chunked} ${GRID_EXTRA:-}"
    # shellcheck disable=SC2086  # GRID_DATA is a list of dataset names
    RESULTS_DIR=docs/results/paper_recipe slice_of_grid grid --data ${GRID_DATA:-ETTh1 ETTh2} "${PAPER_GRID_MODELS[@]}"
    exit $?
    ;;
tune)
    # fla's own autotuning at CAPS's shapes, saved as fla config files: unpack $OUT/fla_configs.tar.gz into
    # benchmarks/fla_configs/ and commit it, and later slices on this GPU use the tuned configs.
    CAPS_FLA_AUTOTUNE=1 FLA_CACHE_MODE=disabled timeout "${TUNE_SECONDS:-540}" python3 benchmarks/fla_autotune.py --out "/tmp/fla_configs/$gpu" \
        --seconds $(( ${TUNE_SECONDS:-540} - 20 )) 2>&1 | tee "$out/tune.log"
    tar -C /tmp -czf "$out/fla_configs.tar.gz" fla_configs
    ;;
arithmetic)
    slice_of_grid arithmetic --data ETTh1 ETTm1 --pred_lens 96 336 --seeds 2021 2022 2023 --models CAPS \
        --variant "CAPS dropout official=CAPS:--caps_dropout_rescale official" \
        --variant "CAPS path2 official=CAPS:--caps_path2_decay official" \
        --variant "CAPS RoPE official=CAPS:--caps_rope_layout official" \
        --variant "CAPS marks official=CAPS:--caps_mark_norm official"
    exit $?
    ;;
baselines)
    RESULTS_DIR=docs/results/paper_recipe slice_of_grid baselines --data ETTh1 ETTh2 --pred_lens 96 192 336 720 \
        "${PAPER_BASELINES[@]}"
    exit $?
    ;;
zoo)
    # shellcheck disable=SC2086  # ZOO_MODELS is a list of model rows
    RESULTS_DIR=docs/results/zoo_ETTh1_gpu slice_of_grid zoo --data ETTh1 --pred_lens 96 --models ${ZOO_MODELS:-WPMixer \
        TimeMixerPP Mamba}
    exit $?
    ;;
*)
    echo "gpu_slice: unknown step '$step'; choose exact, bench, grid, official, arithmetic, session, baselines, tune or zoo" >&2
    exit 2
    ;;
esac
