#!/usr/bin/env bash
# Prepare, on the CPU machine, what a lent-GPU slice carries (issue 18): run once per workspace, before the
# first device call, so that no device minute goes into preparation.
#
#   bash benchmarks/gpu_prepare.sh [MIRROR]   (MIRROR: default $TSLIB_DATA_MIRROR, else ../shared/datasets beside
#                                             the checkout; a relative MIRROR is read from the current folder)
#
# Writes the two git-ignored folders that `benchmarks/gpu_slice.sh` reads:
#   .whl/                 the wheels the device image lacks (Python 3.12, x86-64), each at the version installed
#                         here where it is installed (so the GPU runs the libraries the CPU tests ran), else the
#                         newest: fla-core (CAPS --caps_impl fla), PyWavelets (WPMixer), reformer-pytorch and its
#                         needs (Reformer)
#   .gpu/datasets.tar.xz  the data mirror's SHA256SUMS, ETT-small and weather (gpu_slice.sh checks the sums there)
# then prints what a call carrying both sends against the device tool's 64 MiB limit. Re-running replaces both.
# Needs pip's access to the package index (not the device machine's: it has none).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
mirror="${1:-${TSLIB_DATA_MIRROR:-$repo/../shared/datasets}}"
[ -f "$mirror/SHA256SUMS" ] || { echo "gpu_prepare: no SHA256SUMS in $mirror: pass the data mirror's folder" >&2; exit 2; }
mirror="$(cd "$mirror" && pwd)"  # absolute: the script works from the repository root below
cd "$repo"
(cd "$mirror" && sha256sum --quiet -c SHA256SUMS) \
    || { echo "gpu_prepare: $mirror does not match its SHA256SUMS: restore the mirror first" >&2; exit 2; }

# fla-core is pinned: it is the version the CUDA exactness tests passed with (docs/results/gpu_slice_2026-11-27).
FLA_VERSION="${FLA_VERSION:-0.6.0}"
packages=(PyWavelets reformer-pytorch axial-positional-embedding local-attention product-key-memory
          hyper-connections colt5-attention torch-einops-utils)

pinned=("fla-core==$FLA_VERSION")
for name in "${packages[@]}"; do
    version=$(python3 -c "import importlib.metadata as m, sys
try: print(m.version(sys.argv[1]))
except m.PackageNotFoundError: pass" "$name")
    pinned+=("$name${version:+==$version}")
done

rm -rf .whl && mkdir -p .whl .gpu
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${pinned[@]}" \
    || { echo "gpu_prepare: pip download failed for ${pinned[*]}: check the package index is reachable" >&2; exit 2; }
tar -C "$mirror" -cJf .gpu/datasets.tar.xz SHA256SUMS ETT-small weather

echo "gpu_prepare: wheels: ${pinned[*]}"
ls -1 .whl
tree_bytes=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
carry_bytes=$(du -cb .whl .gpu | tail -1 | cut -f1)
total=$((tree_bytes + carry_bytes))
echo "gpu_prepare: working tree $((tree_bytes / 1048576)) MiB + .whl and .gpu $((carry_bytes / 1048576)) MiB" \
     "= $((total / 1048576)) MiB of the 64 MiB a call may send"
[ "$total" -lt $((64 * 1048576)) ] || { echo "gpu_prepare: over 64 MiB: carry less (e.g. drop .gpu/*.tar.gz archives)" >&2; exit 2; }
