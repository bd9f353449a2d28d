"""The CAPS attention kernels, one concept per file; `layers/CAPS_Attention.py` holds the layer and re-exports
every public name. Imports run down this list only (tests/test_layout.py forbids import circles):

    options     choice lists, defaults, CAPS_OPTIONS and the checks of a value (no torch)
    model_options  the CAPS model's own options, CAPS_MODEL_OPTIONS (no torch)
    rope        RoPE frequencies, angles and rotation
    official    the official code's features and RoPE layout
    maths       each path as features of one decayed linear attention; chunk helpers
    naive       the quadratic reference (and `path_weights`)
    recurrent   the O(T) step form
    decayed     the chunked decayed-linear-attention primitive and its autograd function
    chunked     the chunked CAPS kernel, blocked over sequences on the CPU
    native      the optional C++ CPU recurrence (native.cpp)
    fla         fla-core's Triton kernel on CUDA (optional)
    normalised  normalised linear attention around any linear one
    dispatch    resolve_impl, CAPS_KERNELS and `caps_attention`
    rmsnorm     the blocks' RMSNorm: autograd reference and the fused form (analytic backward)
    mlp         the blocks' GELU MLP: autograd reference and the lean form (GELU recomputed in backward)

Derivations and measurements: README.md in this folder. Nothing is imported here, so importing one file
loads only what it needs.
"""
