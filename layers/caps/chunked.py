"""The chunked linear CAPS kernel: the selected paths as features (`maths._path_features`) fed to the chunked
primitive (`decayed.decayed_linear_attention_chunked`), O(T C F).

In eager mode on the CPU the batch runs in blocks of sequences with recompute in backward
(`_BlockedChunkedCAPS`; layers/caps/README.md, "Sequence blocks and recompute").
"""

from __future__ import annotations

import torch
from einops import rearrange

from layers.caps.decayed import decayed_linear_attention_chunked
from layers.caps.maths import _path_features
from layers.caps.options import _check_chunk, default_chunk, parse_paths, resolve_attn_impl
from layers.caps.rope import _rotated

# Elements of one [rows, H, T, F] feature tensor per block of the eager chunked kernel (4 MiB in
# float32): small enough for the allocator to reuse and for the caches to hold a block's working set.
BLOCK_ELEMENTS = 1 << 20


def _caps_chunked_rows(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor,
    clock: torch.Tensor, paths: tuple[int, ...], chunk_size: int,
) -> torch.Tensor:
    """Chunked linear CAPS on a set of rows (sequences): the selected paths fused along features."""
    qt, kt, ell = _path_features(q, k, p, g, clock, paths, chunk_size)  # [B, H, T, F]
    o = decayed_linear_attention_chunked(qt, kt, rearrange(v, "b t h v -> b h t v"), ell, chunk_size)
    return rearrange(o, "b h t v -> b t h v")


def rows_per_block(shape: torch.Size, n_paths: int, block_elements: int = BLOCK_ELEMENTS) -> int:
    """Sequences per block so that one [rows, H, T, F] feature tensor holds about block_elements values."""
    _, T, H, E = shape
    return max(1, block_elements // max(1, T * H * E * max(1, n_paths)))


class _BlockedChunkedCAPS(torch.autograd.Function):
    """Chunked CAPS run block by block over the batch, recomputing each block in backward.

    Every intermediate of the chunked kernel is a [B, H, T, F]- or [B, H, N, C, C]-sized tensor;
    computed for the whole batch, each one is a fresh allocation of tens to hundreds of MB whose
    first touch costs page faults, and autograd keeps dozens of them alive until backward. Run
    over blocks of `rows` sequences instead, the intermediates are a few MB (allocator reuse, cache
    resident), forward saves only the inputs, and backward recomputes one block at a time under
    autograd (activation checkpointing per block). The arithmetic per sequence is unchanged, so the
    result equals the unblocked kernel up to floating-point summation order in matmuls.
    """

    @staticmethod
    def forward(ctx, q, k, v, p, g, clock, paths, chunk_size, rows):  # noqa: ANN001, ANN205 (autograd.Function protocol)
        ctx.paths, ctx.chunk_size, ctx.rows = paths, chunk_size, rows
        ctx.save_for_backward(q, k, v, p, g, clock)
        out = v.new_empty(v.shape)  # [B, T, H, Ev]
        for start in range(0, q.shape[0], rows):
            block = slice(start, start + rows)
            out[block] = _caps_chunked_rows(q[block], k[block], v[block], p[block], g[block], clock[block],
                                            paths, chunk_size)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, do):  # noqa: ANN001, ANN205 (autograd.Function protocol)
        inputs = ctx.saved_tensors
        grads = [torch.empty_like(x) if need else None for x, need in zip(inputs, ctx.needs_input_grad[:6], strict=True)]
        wanted = [i for i, need in enumerate(ctx.needs_input_grad[:6]) if need]
        for start in range(0, do.shape[0], ctx.rows):
            block = slice(start, start + ctx.rows)
            with torch.enable_grad():
                xs = [x[block].detach().requires_grad_(i in wanted) for i, x in enumerate(inputs)]
                o = _caps_chunked_rows(*xs, ctx.paths, ctx.chunk_size)
                # allow_unused: an input the selected paths never read (g without path 2) gets zeros.
                gs = torch.autograd.grad(o, [xs[i] for i in wanted], do[block], allow_unused=True)
            for i, grad in zip(wanted, gs, strict=True):
                grads[i][block] = 0.0 if grad is None else grad
        return (*grads, None, None, None)


def caps_attention_chunked(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: torch.Tensor, g: torch.Tensor, clock: torch.Tensor,
    paths: tuple[int, ...], *, attn: str = "linear", chunk_size: int | None = None,
    rope_freq: torch.Tensor | None = None,
) -> torch.Tensor:
    """Chunked O(T C F) linear CAPS. The `CAPSKernel` signature; linear attention only; chunk_size None:
    `default_chunk(q.device)`.

    Eager mode on the CPU runs blocks of sequences (`_BlockedChunkedCAPS`, block size from the module's
    BLOCK_ELEMENTS, read at call time); on a GPU (whose caching allocator has no first-touch cost, and where
    each block would add kernel launches: 3.7x slower at the H=720 recipe on an H100) and under
    torch.compile the whole batch is one pass.
    """
    resolve_attn_impl(attn, "chunked")
    _check_chunk(chunk_size)
    ids = parse_paths(paths)
    chunk_size = chunk_size or default_chunk(q.device)
    q, k = _rotated(q, k, rope_freq)
    rows = rows_per_block(q.shape, len(ids), BLOCK_ELEMENTS)
    if torch.compiler.is_compiling() or q.device.type != "cpu" or rows >= q.shape[0]:
        return _caps_chunked_rows(q, k, v, p, g, clock, ids, chunk_size)
    return _BlockedChunkedCAPS.apply(q, k, v, p, g, clock, ids, chunk_size, rows)
