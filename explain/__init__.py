"""`python -m explain`: a look inside a trained CAPS model on one test window (issue 19).

    python -m explain --checkpoint checkpoints/<setting>[/checkpoint.pth] --window 0 --channel 2 \\
        [--out DIR] [run.py flags]

The run's flags are read from `<setting>/last.pth` (exp/checkpointing.py keeps them there, except the
resume-free ones such as --root_path); run.py flags given here override them, and without a last.pth
they must name the whole run (--task_name ... --model CAPS --data ...).

For every CAPS layer it writes the contribution of each path to the layer's attention output over time,
the Clock Δ_t, and the path weights as t × i heat maps (CAPS paper, Eqs. path1-path3 and the additive
composition), for one decoded channel and for the mean over the decoded channels. Nothing here
re-implements a path:

- the model runs its own forward on the window while forward hooks keep each CAPS layer's input and output;
- `CAPSAttention.attention_inputs` turns the input into the kernel's q, k, v, p, g and Clock through the
  layer's projections (a test pins it to the layer's forward);
- o^(j) is `caps_attention` with `paths=(j,)` and the layer's kernel, impl and chunk; the paths are
  additive, so Σ_j o^(j) is the layer's attention output;
- G (path 1), A (path 2) and the clock average (path 3) are `path_weights`, i.e. `_naive_weights` of the
  naive reference kernel; `scores[t, i] = Σ_e q̂_t k̂_i W[t, i, e]` applied to v gives o^(j) again.

Linear attention with the paper's numerics, forecasting, causal blocks only: the other settings are
refused with a one-line error that says why. Files and figures: layers/CAPS_Attention.md, "Looking
inside: python -m explain".

An application floor of its own beside `compare/` (entry points -> exp -> models -> layers -> utils): the run
behind a checkpoint (`explain.checkpoint`), the layers split by path (`explain.paths`), the files and figures
(`explain.figures`) and the command line (`explain.cli`). Without `--out` the files go to
`./test_results/<setting>/explain/window<I>_channel<C>`, beside run.py's own test figures of that setting.
"""
