// Linear CAPS attention as one recurrence per sequence and head on the CPU (layers/caps/README.md).
//
// Inputs per step t (heads packed, [B, T, H, X] with any batch/time strides): q, k, p, g [E], v [Ev],
// clock c. The gates are computed here, a segment at a time, in the input's precision (as torch computes them):
//     path 1: pt = p + log c,  m_t = max(m_{t-1}, pt) (running max, per feature; a constant: the output
//             does not depend on it),  w = exp(pt - m_t),  r = exp(m_{t-1} - m_t) (in double, r_0 = 1)
//     path 2: sp = softplus(g) (g above 20: g),  d2m1 = d2 - 1 = expm1(-sp c) (its decay d2 = 1 + d2m1 keeps
//             float32's relative precision in 1 - d2, which for weak gates is far below float32's
//             resolution next to 1)
// Features f = (path, e), F = n_paths E, concatenated in path order 1, 2, 3:
//     path 1: z_t = r_t z_{t-1} + w_t,   qt = q / z_t,   kt = k w_t,   decay r_t
//     path 2:                           qt = q,         kt = k,       decay d2_t
//     path 3: C_t = C_{t-1} + c_t,      qt = q / C_t,   kt = k c_t,   decay 1
//     S_t = diag(decay_t) S_{t-1} + kt_t v_t^T   [F, Ev],   o_t = S_t^T qt_t
// Backward, with R_t = dL/dS_t = qt_t do_t^T + diag(decay_{t+1}) R_{t+1}:
//     dqt = S_t do_t, dkt = R_t v_t, dv_t = R_t^T kt_t, d decay_t = rowsum(R_t * S_{t-1}),
// then through qt, kt: the normalisers z and C get reverse scans Gz_t = dz_t + r_{t+1} Gz_{t+1} and
// GC_t = dC_t + GC_{t+1}; and through the gates (m held constant, r carries no gradient):
//     dw = Gz + dkt k,  dp = dw w,  dc += sum_e dp / c                                   (path 1)
//     da = d d2m1 (1 + d2m1),  dg = -c da softplus'(g),  dc -= sum_e da sp                (path 2)
// with softplus'(g) = e / (1 + e), e = exp(g) (1 above 20). Gradients are returned for q, k, v, p, g and c.
//
// The states and every sum are kept in double whatever the input type, so a float32 call is the
// float64 recurrence on float32 gates, rounded once per output. States are stored as [J, Ev] vectors of
// four features (F padded to J = ceil(F / 4) groups; zero features contribute nothing): every per-feature
// quantity is a short array of 4-double vectors, the loops run over groups outside and values inside (the
// group's factors stay in registers), and only the Ev outputs need horizontal sums. Forward stores the
// states, scans and running max entering every segment of `segment` steps; backward recomputes each
// segment from them (exactly the forward's values, gates included) and runs the reverse recurrence.
// (b, h) rows are independent and split across ATen's threads. The gates' exp, expm1 and log1p are
// SLEEF's vectorised functions (those ATen's own CPU kernels call, 1-ULP accuracy) where AVX2 is
// compiled in, the C library's elsewhere.
//
// RoPE inside the kernel (optional): with tables cos, sin [T, E/2] the kernel reads q and k unrotated
// and rotates pair (2j, 2j+1) of step t by the angle whose cosine and sine are cos[t, j], sin[t, j]
// before anything else; backward returns dq, dk for the unrotated inputs and the table gradients
// dcos[t, j] = sum_{b,h} (dr_2j x_2j + dr_2j+1 x_2j+1), dsin[t, j] = sum_{b,h} (dr_2j+1 x_2j - dr_2j x_2j+1)
// over x = q, k with dr the gradient of the rotated vector, accumulated per thread (deterministic for
// a given thread count) and summed at the end. This saves the separate rotation passes over q, k.
//
// Built on first use by layers/caps/native.py (torch.utils.cpp_extension). Optional: without a
// compiler CAPS runs the pure-torch chunked kernel.

#include <torch/extension.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#include <sleef.h>
#endif

namespace {

// Four doubles, one AVX register (two SSE registers without AVX): GCC/Clang vector extension.
typedef double vec4 __attribute__((vector_size(32)));

// Bounds of the stack arrays: head width E and value width Ev up to 256 (3 paths: 768 features).
// native.py's MAX_HEAD_DIM must equal it (a test reads this line).
constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kMaxGroups = 3 * kMaxHeadDim / 4;

inline double hsum(vec4 x) {
  return (x[0] + x[1]) + (x[2] + x[3]);
}

// A [B, T, H, X] tensor with stride(H) = X and stride(X) = 1: row (b, t, h) starts at at(b, t, h).
template <typename T>
struct Rows {
  T* data;
  int64_t sb, st, width;
  T* at(int64_t b, int64_t t, int64_t h) const { return data + b * sb + t * st + h * width; }
};

template <typename T>
Rows<T> rows_of(const torch::Tensor& x) {
  return Rows<T>{x.data_ptr<std::remove_const_t<T>>(), x.stride(0), x.stride(1), x.size(3)};
}

// The gates' elementwise functions.
enum class Fn { kExp, kExpm1, kLog1p, kLog };

#if defined(__AVX2__) || defined(__AVX512F__)
// One register of SLEEF lanes: Lanes<T>::call<fn>(x) applies fn to x[0 .. kWidth) in place.
template <typename scalar_t>
struct Lanes;

#define CAPS_SLEEF_LANES(T, WIDTH, VEC, LOAD, STORE, SUFFIX)                              \
  template <>                                                                               \
  struct Lanes<T> {                                                                         \
    static constexpr int64_t kWidth = WIDTH;                                                \
    template <Fn fn>                                                                        \
    static void call(T* x) {                                                                \
      const VEC v = LOAD(x);                                                                \
      STORE(x, fn == Fn::kExp     ? Sleef_exp##SUFFIX##_u10(v)                              \
               : fn == Fn::kExpm1 ? Sleef_expm1##SUFFIX##_u10(v)                            \
               : fn == Fn::kLog1p ? Sleef_log1p##SUFFIX##_u10(v)                            \
                                  : Sleef_log##SUFFIX##_u10(v));                            \
    }                                                                                       \
  };

#if defined(__AVX512F__)
// 16 floats or 8 doubles.
CAPS_SLEEF_LANES(float, 16, __m512, _mm512_loadu_ps, _mm512_storeu_ps, f16)
CAPS_SLEEF_LANES(double, 8, __m512d, _mm512_loadu_pd, _mm512_storeu_pd, d8)
#else
// 8 floats or 4 doubles.
CAPS_SLEEF_LANES(float, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, f8)
CAPS_SLEEF_LANES(double, 4, __m256d, _mm256_loadu_pd, _mm256_storeu_pd, d4)
#endif
#undef CAPS_SLEEF_LANES
#else
template <Fn fn, typename scalar_t>
inline scalar_t call_scalar(scalar_t x) {
  return fn == Fn::kExp ? std::exp(x) : fn == Fn::kExpm1 ? std::expm1(x) : fn == Fn::kLog1p ? std::log1p(x) : std::log(x);
}
#endif

// x[i] <- fn(x[i]) for i < n, in x's precision: SLEEF's vectorised function a register at a time (the tail
// padded with ones) where AVX2 or AVX-512 is compiled in, the C library's elsewhere.
template <Fn fn, typename scalar_t>
inline void apply_inplace(scalar_t* x, int64_t n) {
#if defined(__AVX2__) || defined(__AVX512F__)
  constexpr int64_t L = Lanes<scalar_t>::kWidth;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    Lanes<scalar_t>::template call<fn>(x + i);
  }
  if (i < n) {
    scalar_t tail[L];
    std::fill(tail, tail + L, scalar_t(1));  // a value every function takes
    std::copy(x + i, x + n, tail);
    Lanes<scalar_t>::template call<fn>(tail);
    std::copy(tail, tail + (n - i), x + i);
  }
#else
  for (int64_t i = 0; i < n; ++i) {
    x[i] = call_scalar<fn>(x[i]);
  }
#endif
}

// Inputs of one call; path p is on when paths & (1 << (p - 1)). J groups of 4 features (F padded).
template <typename scalar_t>
struct Inputs {
  Rows<const scalar_t> q, k, v, p, g;
  const scalar_t* clock;  // [B, T, H] contiguous
  const scalar_t* cos;    // [T, E / 2] contiguous, or nullptr: no rotation
  const scalar_t* sin;
  int64_t B, T, H, E, Ev, F, J, paths, segment;
  bool on(int path) const { return paths & (1 << (path - 1)); }
  int64_t segments() const { return (T + segment - 1) / segment; }
  double c(int64_t b, int64_t t, int64_t h) const { return static_cast<double>(clock[(b * T + t) * H + h]); }
};

// Head widths with a compile-time specialisation W (their loops unroll; E = Ev = W); W = 0: the widths
// read at run time.
template <int64_t W>
inline int64_t value_width(int64_t width) {
  return W > 0 ? W : width;
}

// x [E] of step t as doubles, rotated pairwise by the step's RoPE angles when the tables are given.
template <typename scalar_t, int64_t W>
inline void load_rotated(const Inputs<scalar_t>& in, const scalar_t* x, int64_t t, double* dst) {
  const int64_t E = value_width<W>(in.E);
  if (in.cos == nullptr) {
    for (int64_t e = 0; e < E; ++e) {
      dst[e] = static_cast<double>(x[e]);
    }
    return;
  }
  const scalar_t* cs = in.cos + t * (E / 2);
  const scalar_t* sn = in.sin + t * (E / 2);
  for (int64_t j = 0; j < E / 2; ++j) {
    const double a = static_cast<double>(x[2 * j]), b = static_cast<double>(x[2 * j + 1]);
    const double c = static_cast<double>(cs[j]), s = static_cast<double>(sn[j]);
    dst[2 * j] = a * c - b * s;
    dst[2 * j + 1] = a * s + b * c;
  }
}

// Back through the rotation of step t: dr [E] is the gradient of the rotated x, overwritten with the
// gradient of x; the table gradients of the step are added to dtrig [2, T, E / 2] (cos, then sin).
template <typename scalar_t, int64_t W>
inline void unrotate(const Inputs<scalar_t>& in, const scalar_t* x, int64_t t, double* dr, double* dtrig) {
  const int64_t half = value_width<W>(in.E) / 2;
  const scalar_t* cs = in.cos + t * half;
  const scalar_t* sn = in.sin + t * half;
  for (int64_t j = 0; j < half; ++j) {
    const double a = static_cast<double>(x[2 * j]), b = static_cast<double>(x[2 * j + 1]);
    const double c = static_cast<double>(cs[j]), s = static_cast<double>(sn[j]);
    const double d0 = dr[2 * j], d1 = dr[2 * j + 1];
    dtrig[t * half + j] += d0 * a + d1 * b;
    dtrig[(in.T + t) * half + j] += d1 * a - d0 * b;
    dr[2 * j] = d0 * c + d1 * s;
    dr[2 * j + 1] = d1 * c - d0 * s;
  }
}

// The gates of a block of up to `cap` steps as doubles, one [cap, E] array per quantity: path 1's w, r;
// path 2's d2m1, sp = softplus(g) and its derivative sig (sp and sig are read by backward only), plus two
// [cap, E] scratch arrays of the input type.
template <typename scalar_t>
struct GateBlock {
  static constexpr int64_t kRows = 5;
  int64_t cap, E;
  std::vector<double> values;
  std::vector<scalar_t> scratch;
  GateBlock(int64_t cap, int64_t E) : cap(cap), E(E), values(kRows * cap * E), scratch(2 * cap * E) {}
  double* row(int64_t quantity) { return values.data() + quantity * cap * E; }
};

// The gates of step i of a block: pointers to its E values of each quantity.
struct Gates {
  const double *w, *r, *d2m1, *sp, *sig;
  template <typename scalar_t>
  Gates(GateBlock<scalar_t>& block, int64_t i)
      : w(block.row(0) + i * block.E),
        r(block.row(1) + i * block.E),
        d2m1(block.row(2) + i * block.E),
        sp(block.row(3) + i * block.E),
        sig(block.row(4) + i * block.E) {}
};

// The gates of steps start..stop-1 of row (b, h) (module comment) into `out` (step t at t - start), computed
// in the input's precision as torch computes them elementwise (r in double), a whole block per vectorised
// call; m [E] holds path 1's running max up to step start - 1 and is advanced to step stop - 1 (read only
// when start > 0).
template <typename scalar_t, int64_t W>
void compute_gates(const Inputs<scalar_t>& in, int64_t b, int64_t h, int64_t start, int64_t stop, scalar_t* m,
                   GateBlock<scalar_t>& out) {
  const int64_t E = value_width<W>(in.E), n = (stop - start) * E;
  scalar_t* x = out.scratch.data();
  scalar_t* y = x + out.cap * E;
  for (int64_t t = start; t < stop; ++t) {  // y[i] = log c_t, then -c_t
    y[t - start] = in.clock[(b * in.T + t) * in.H + h];
  }
  if (in.on(1)) {
    apply_inplace<Fn::kLog>(y, stop - start);
    double* r = out.row(1);
    for (int64_t t = start; t < stop; ++t) {
      const scalar_t* p = in.p.at(b, t, h);
      const int64_t i = (t - start) * E;
      for (int64_t e = 0; e < E; ++e) {
        const scalar_t pt = p[e] + y[t - start];
        const scalar_t prev = t == 0 ? pt : m[e];
        m[e] = std::max(prev, pt);
        r[i + e] = m[e] == prev ? 1.0 : std::exp(static_cast<double>(prev) - static_cast<double>(m[e]));
        x[i + e] = pt - m[e];
      }
    }
    apply_inplace<Fn::kExp>(x, n);
    std::copy(x, x + n, out.row(0));
    for (int64_t t = start; t < stop; ++t) {
      y[t - start] = -in.clock[(b * in.T + t) * in.H + h];
    }
  } else {
    for (int64_t t = start; t < stop; ++t) {
      y[t - start] = -y[t - start];
    }
  }
  if (in.on(2)) {
    double* sig = out.row(4);
    double* sp = out.row(3);
    for (int64_t t = start; t < stop; ++t) {
      std::copy(in.g.at(b, t, h), in.g.at(b, t, h) + E, x + (t - start) * E);
    }
    apply_inplace<Fn::kExp>(x, n);  // exp(g)
    for (int64_t i = 0; i < n; ++i) {
      sig[i] = static_cast<double>(x[i]) / (1.0 + static_cast<double>(x[i]));
    }
    apply_inplace<Fn::kLog1p>(x, n);  // softplus below torch's threshold 20
    for (int64_t t = start; t < stop; ++t) {
      const scalar_t* g = in.g.at(b, t, h);
      const int64_t i = (t - start) * E;
      for (int64_t e = 0; e < E; ++e) {
        if (g[e] > scalar_t(20)) {
          x[i + e] = g[e];
          sig[i + e] = 1.0;
        }
        sp[i + e] = static_cast<double>(x[i + e]);
        x[i + e] = x[i + e] * y[t - start];  // -softplus(g) c
      }
    }
    apply_inplace<Fn::kExpm1>(x, n);
    std::copy(x, x + n, out.row(2));
  }
}

// The features of step t of row (b, h) as J vectors each: qt, kt, decay (padding zero), given the
// (rotated) q, k [E], the step's gates and the reciprocals of the scans 1 / z_t [E] and 1 / C_t.
template <typename scalar_t, int64_t W>
inline void features(const Inputs<scalar_t>& in, int64_t b, int64_t t, int64_t h, const double* q, const double* k,
                     const Gates& gate, const double* inv_z, double inv_C, vec4* Q, vec4* K, vec4* D) {
  const int64_t E = value_width<W>(in.E);
  double* qt = reinterpret_cast<double*>(Q);
  double* kt = reinterpret_cast<double*>(K);
  double* decay = reinterpret_cast<double*>(D);
  int64_t f = 0;
  if (in.on(1)) {
    for (int64_t e = 0; e < E; ++e, ++f) {
      qt[f] = q[e] * inv_z[e];
      kt[f] = k[e] * gate.w[e];
      decay[f] = gate.r[e];
    }
  }
  if (in.on(2)) {
    for (int64_t e = 0; e < E; ++e, ++f) {
      qt[f] = q[e];
      kt[f] = k[e];
      decay[f] = 1.0 + gate.d2m1[e];
    }
  }
  if (in.on(3)) {
    const double c = in.c(b, t, h);
    for (int64_t e = 0; e < E; ++e, ++f) {
      qt[f] = q[e] * inv_C;
      kt[f] = k[e] * c;
      decay[f] = 1.0;
    }
  }
  for (; f < 4 * in.J; ++f) {
    qt[f] = kt[f] = decay[f] = 0.0;
  }
}

// Advances the scans to step t: z_t = r_t z_{t-1} + w_t (path 1), C_t = C_{t-1} + c_t (path 3).
template <typename scalar_t, int64_t W>
inline void advance_scans(const Inputs<scalar_t>& in, int64_t b, int64_t t, int64_t h, const Gates& gate,
                          double* z, double& C) {
  const int64_t E = value_width<W>(in.E);
  if (in.on(1)) {
    for (int64_t e = 0; e < E; ++e) {
      z[e] = gate.r[e] * z[e] + gate.w[e];
    }
  }
  if (in.on(3)) {
    C += in.c(b, t, h);
  }
}

inline void reciprocals(const double* z, double C, int64_t E, double* inv_z, double& inv_C) {
  for (int64_t e = 0; e < E; ++e) {
    inv_z[e] = 1.0 / z[e];
  }
  inv_C = 1.0 / C;
}

// Doubles per checkpoint of the scans: z [E], C, path 1's running max m [E].
inline int64_t scan_size(int64_t E) {
  return 2 * E + 1;
}

template <typename scalar_t>
inline void load_values(const scalar_t* src, int64_t n, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<double>(src[i]);
  }
}

template <typename scalar_t, int64_t W>
void forward_row(const Inputs<scalar_t>& in, int64_t b, int64_t h, scalar_t* out, vec4* ckpt_state,
                 double* ckpt_scan) {
  const int64_t Ev = value_width<W>(in.Ev), J = in.J, E = value_width<W>(in.E), size = Ev * J;
  std::vector<vec4> state(size, vec4{0.0, 0.0, 0.0, 0.0});
  vec4* __restrict__ S = state.data();
  double z[kMaxHeadDim] = {0.0}, inv_z[kMaxHeadDim], C = 0.0, inv_C = 0.0, qr[kMaxHeadDim], kr[kMaxHeadDim];
  scalar_t m[kMaxHeadDim] = {};
  GateBlock<scalar_t> block(std::min(in.segment, in.T), E);
  vec4 Q[kMaxGroups], K[kMaxGroups], D[kMaxGroups], acc[W > 0 ? W : kMaxHeadDim];
  double vt[W > 0 ? W : kMaxHeadDim];
  for (int64_t t = 0; t < in.T; ++t) {
    if (t % in.segment == 0) {
      double* scan = ckpt_scan + (t / in.segment) * scan_size(E);
      std::copy(S, S + size, ckpt_state + (t / in.segment) * size);
      std::copy(z, z + E, scan);
      scan[E] = C;
      std::copy(m, m + E, scan + E + 1);
      compute_gates<scalar_t, W>(in, b, h, t, std::min(in.T, t + in.segment), m, block);
    }
    const Gates gate(block, t % in.segment);
    advance_scans<scalar_t, W>(in, b, t, h, gate, z, C);
    reciprocals(z, C, E, inv_z, inv_C);
    load_rotated<scalar_t, W>(in, in.q.at(b, t, h), t, qr);
    load_rotated<scalar_t, W>(in, in.k.at(b, t, h), t, kr);
    features<scalar_t, W>(in, b, t, h, qr, kr, gate, inv_z, inv_C, Q, K, D);
    load_values(in.v.at(b, t, h), Ev, vt);
    for (int64_t e = 0; e < Ev; ++e) {
      acc[e] = vec4{0.0, 0.0, 0.0, 0.0};
    }
    for (int64_t j = 0; j < J; ++j) {
      const vec4 Dj = D[j], Kj = K[j], Qj = Q[j];
      vec4* __restrict__ s = S + j * Ev;
      for (int64_t e = 0; e < Ev; ++e) {
        s[e] = Dj * s[e] + Kj * vt[e];
        acc[e] += Qj * s[e];
      }
    }
    scalar_t* o = out + ((b * in.T + t) * in.H + h) * Ev;
    for (int64_t e = 0; e < Ev; ++e) {
      o[e] = static_cast<scalar_t>(hsum(acc[e]));
    }
  }
}

// Gradient outputs, contiguous: dq, dk, dp, dg [B, T, H, E], dv [B, T, H, Ev], dc [B, T, H].
template <typename scalar_t>
struct Grads {
  scalar_t *dq, *dk, *dv, *dp, *dg, *dc;
};

template <typename scalar_t, int64_t W>
void backward_row(const Inputs<scalar_t>& in, int64_t b, int64_t h, const scalar_t* dout, const vec4* ckpt_state,
                  const double* ckpt_scan, const Grads<scalar_t>& g, double* dtrig) {
  const int64_t Ev = value_width<W>(in.Ev), J = in.J, E = value_width<W>(in.E), size = Ev * J, segment = in.segment;
  // Per step i of the current segment (t = start + i - 1): states[i] = S_t (states[0] = S_{start-1},
  // the checkpoint), feats[i] = (Q, K, D), scans[i] = (1 / z_t, 1 / C_t), qks[i] = (q, k) rotated and
  // gates[i] the step's gates.
  std::vector<vec4> states((segment + 1) * size), feats((segment + 1) * 3 * J);
  std::vector<vec4> grad_state(size, vec4{0.0, 0.0, 0.0, 0.0});
  std::vector<double> scans((segment + 1) * (E + 1)), qks((segment + 1) * 2 * E);
  GateBlock<scalar_t> block(std::min(segment, in.T), E);
  scalar_t m[kMaxHeadDim];
  vec4* __restrict__ R = grad_state.data();
  vec4 D_next[kMaxGroups], dQ[kMaxGroups], dK[kMaxGroups], dD[kMaxGroups];
  std::fill(D_next, D_next + J, vec4{0.0, 0.0, 0.0, 0.0});
  double z[kMaxHeadDim], C, Gz[kMaxHeadDim] = {0.0}, GC = 0.0, dq[kMaxHeadDim], dk[kMaxHeadDim];
  vec4 acc[W > 0 ? W : kMaxHeadDim];
  double vt[W > 0 ? W : kMaxHeadDim], dt[W > 0 ? W : kMaxHeadDim];
  for (int64_t seg = in.segments() - 1; seg >= 0; --seg) {
    const int64_t start = seg * segment, stop = std::min(in.T, start + segment);
    const double* scan = ckpt_scan + seg * scan_size(E);
    std::copy(ckpt_state + seg * size, ckpt_state + (seg + 1) * size, states.begin());
    std::copy(scan, scan + E, z);
    C = scan[E];
    for (int64_t e = 0; e < E; ++e) {
      m[e] = static_cast<scalar_t>(scan[E + 1 + e]);  // stored exactly
    }
    compute_gates<scalar_t, W>(in, b, h, start, stop, m, block);
    for (int64_t t = start; t < stop; ++t) {
      const int64_t i = t - start + 1;
      double* inv = scans.data() + i * (E + 1);
      vec4* Q = feats.data() + i * 3 * J;
      double* q = qks.data() + i * 2 * E;
      const Gates gate(block, t - start);
      advance_scans<scalar_t, W>(in, b, t, h, gate, z, C);
      reciprocals(z, C, E, inv, inv[E]);
      load_rotated<scalar_t, W>(in, in.q.at(b, t, h), t, q);
      load_rotated<scalar_t, W>(in, in.k.at(b, t, h), t, q + E);
      features<scalar_t, W>(in, b, t, h, q, q + E, gate, inv, inv[E], Q, Q + J, Q + 2 * J);
      load_values(in.v.at(b, t, h), Ev, vt);
      const vec4* __restrict__ prev = states.data() + (i - 1) * size;
      vec4* __restrict__ next = states.data() + i * size;
      for (int64_t j = 0; j < J; ++j) {
        const vec4 Dj = Q[2 * J + j], Kj = Q[J + j];
        for (int64_t e = 0; e < Ev; ++e) {
          next[j * Ev + e] = Dj * prev[j * Ev + e] + Kj * vt[e];
        }
      }
    }
    for (int64_t t = stop - 1; t >= start; --t) {
      const int64_t i = t - start + 1, row = (b * in.T + t) * in.H + h;
      const double* inv_z = scans.data() + i * (E + 1);
      const double inv_C = inv_z[E];
      const vec4* __restrict__ Q = feats.data() + i * 3 * J;
      const vec4* __restrict__ K = Q + J;
      const vec4* __restrict__ D = Q + 2 * J;
      const vec4* __restrict__ S = states.data() + i * size;
      const vec4* __restrict__ S_prev = S - size;
      load_values(in.v.at(b, t, h), Ev, vt);
      load_values(dout + row * Ev, Ev, dt);
      for (int64_t e = 0; e < Ev; ++e) {
        acc[e] = vec4{0.0, 0.0, 0.0, 0.0};
      }
      for (int64_t j = 0; j < J; ++j) {
        const vec4 Dn = D_next[j], Qj = Q[j], Kj = K[j];
        // Four partial sums per reduction (e mod 4): a quarter of the length of each dependent add chain.
        vec4 gq[4] = {}, gk[4] = {}, gd[4] = {};
        vec4* __restrict__ r = R + j * Ev;
        const vec4* __restrict__ s = S + j * Ev;
        const vec4* __restrict__ sp = S_prev + j * Ev;
        for (int64_t e = 0; e < Ev; ++e) {
          r[e] = Dn * r[e] + Qj * dt[e];  // R_t = qt do^T + diag(decay_{t+1}) R_{t+1}
          gq[e & 3] += s[e] * dt[e];
          gk[e & 3] += r[e] * vt[e];
          gd[e & 3] += r[e] * sp[e];
          acc[e] += r[e] * Kj;
        }
        dQ[j] = (gq[0] + gq[1]) + (gq[2] + gq[3]);
        dK[j] = (gk[0] + gk[1]) + (gk[2] + gk[3]);
        dD[j] = (gd[0] + gd[1]) + (gd[2] + gd[3]);
      }
      for (int64_t e = 0; e < Ev; ++e) {
        g.dv[row * Ev + e] = static_cast<scalar_t>(hsum(acc[e]));
      }
      // Chain rule from the features (dqt, dkt, d decay per feature) to the inputs.
      const double* dqt = reinterpret_cast<const double*>(dQ);
      const double* dkt = reinterpret_cast<const double*>(dK);
      const double* dd = reinterpret_cast<const double*>(dD);
      const double* r_next = reinterpret_cast<const double*>(D_next);
      const double* q = qks.data() + i * 2 * E;  // rotated in the recomputation above
      const double* k = q + E;
      const Gates gate(block, t - start);
      const double c = in.c(b, t, h);
      std::fill(dq, dq + E, 0.0);
      std::fill(dk, dk + E, 0.0);
      int64_t f = 0;
      double dc = 0.0;
      if (in.on(1)) {
        double dp_sum = 0.0;
        for (int64_t e = 0; e < E; ++e, ++f) {
          // qt = q / z, kt = k w; z_t = r_t z_{t-1} + w_t, so Gz_t = dz_t + r_{t+1} Gz_{t+1}, dw_t += Gz_t;
          // w = exp(p + log c - m): dp = dw w, dc += dp / c.
          const double qe = q[e], ke = k[e];
          Gz[e] = -dqt[f] * qe * inv_z[e] * inv_z[e] + r_next[f] * Gz[e];
          dq[e] += dqt[f] * inv_z[e];
          dk[e] += dkt[f] * gate.w[e];
          const double dp = (Gz[e] + dkt[f] * ke) * gate.w[e];
          g.dp[row * E + e] = static_cast<scalar_t>(dp);
          dp_sum += dp;
        }
        dc += dp_sum / c;  // sum_e dp / c with one division
      }
      if (in.on(2)) {
        for (int64_t e = 0; e < E; ++e, ++f) {
          // d2m1 = expm1(a), a = -sp c: da = d d2m1 (1 + d2m1); dg = -c da sp', dc -= da sp.
          dq[e] += dqt[f];
          dk[e] += dkt[f];
          const double da = dd[f] * (1.0 + gate.d2m1[e]);
          g.dg[row * E + e] = static_cast<scalar_t>(-c * da * gate.sig[e]);
          dc -= da * gate.sp[e];
        }
      }
      if (in.on(3)) {
        // qt = q / C, kt = k c; C_t = C_{t-1} + c_t, so GC_t = dC_t + GC_{t+1} and dc_t += GC_t.
        double dC = 0.0;
        for (int64_t e = 0; e < E; ++e, ++f) {
          const double qe = q[e], ke = k[e];
          dq[e] += dqt[f] * inv_C;
          dC -= dqt[f] * qe * inv_C * inv_C;
          dk[e] += dkt[f] * c;
          dc += dkt[f] * ke;
        }
        GC += dC;
        dc += GC;
      }
      if (in.cos != nullptr) {
        unrotate<scalar_t, W>(in, in.q.at(b, t, h), t, dq, dtrig);
        unrotate<scalar_t, W>(in, in.k.at(b, t, h), t, dk, dtrig);
      }
      for (int64_t e = 0; e < E; ++e) {
        g.dq[row * E + e] = static_cast<scalar_t>(dq[e]);
        g.dk[row * E + e] = static_cast<scalar_t>(dk[e]);
      }
      g.dc[row] = static_cast<scalar_t>(dc);
      std::copy(D, D + J, D_next);
    }
  }
}

// Calls body(std::integral_constant<int64_t, W>) with W = E for the specialised widths (E = Ev = 8 or 16),
// else W = 0 (widths read at run time).
template <typename Body>
void dispatch_width(int64_t E, int64_t Ev, const Body& body) {
  const int64_t width = E == Ev ? E : 0;
  switch (width) {
    case 8: body(std::integral_constant<int64_t, 8>{}); break;
    case 16: body(std::integral_constant<int64_t, 16>{}); break;
    default: body(std::integral_constant<int64_t, 0>{}); break;
  }
}

void check_rows(const torch::Tensor& x, const torch::Tensor& q, int64_t width, const char* name) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == q.scalar_type(), "caps_cpu_kernel: ", name,
              " must be a CPU tensor of q's dtype");
  TORCH_CHECK(x.dim() == 4 && x.size(0) == q.size(0) && x.size(1) == q.size(1) && x.size(2) == q.size(2) &&
                  x.size(3) == width && x.stride(3) == 1 && x.stride(2) == width,
              "caps_cpu_kernel: ", name, " must be [B, T, H, ", width, "] with packed heads");
}

template <typename scalar_t>
Inputs<scalar_t> make_inputs(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& p, const torch::Tensor& g, const torch::Tensor& clock,
                             const torch::Tensor& cos, const torch::Tensor& sin, int64_t paths, int64_t segment) {
  TORCH_CHECK(q.dim() == 4 && v.dim() == 4, "caps_cpu_kernel: q and v must be [B, T, H, *]");
  const int64_t E = q.size(3), Ev = v.size(3);
  TORCH_CHECK(paths >= 1 && paths <= 7, "caps_cpu_kernel: paths must be a non-empty bit mask of paths 1-3");
  TORCH_CHECK(segment >= 1, "caps_cpu_kernel: segment must be >= 1");
  TORCH_CHECK(E >= 1 && E <= kMaxHeadDim && Ev >= 1 && Ev <= kMaxHeadDim,
              "caps_cpu_kernel: head widths E and Ev must lie in 1..", kMaxHeadDim, ", got ", E, " and ", Ev);
  check_rows(q, q, E, "q");
  check_rows(k, q, E, "k");
  check_rows(v, q, Ev, "v");
  check_rows(p, q, E, "p");
  check_rows(g, q, E, "g");
  TORCH_CHECK(clock.scalar_type() == q.scalar_type() && clock.is_contiguous() &&
                  clock.sizes() == torch::IntArrayRef({q.size(0), q.size(1), q.size(2)}),
              "caps_cpu_kernel: clock must be a contiguous [B, T, H] tensor of q's dtype");
  const bool rotate = cos.numel() > 0;
  if (rotate) {
    const std::vector<int64_t> table{q.size(1), E / 2};
    TORCH_CHECK(E % 2 == 0, "caps_cpu_kernel: RoPE needs an even head width E, got ", E);
    TORCH_CHECK(cos.scalar_type() == q.scalar_type() && sin.scalar_type() == q.scalar_type() && cos.is_contiguous() &&
                    sin.is_contiguous() && cos.sizes() == torch::IntArrayRef(table) &&
                    sin.sizes() == torch::IntArrayRef(table),
                "caps_cpu_kernel: the RoPE tables cos, sin must be contiguous [T, E / 2] tensors of q's dtype");
  }
  const int64_t F = ((paths & 1) + ((paths >> 1) & 1) + ((paths >> 2) & 1)) * E;
  return Inputs<scalar_t>{rows_of<const scalar_t>(q), rows_of<const scalar_t>(k), rows_of<const scalar_t>(v),
                          rows_of<const scalar_t>(p), rows_of<const scalar_t>(g), clock.data_ptr<scalar_t>(), rotate ? cos.data_ptr<scalar_t>() : nullptr,
                          rotate ? sin.data_ptr<scalar_t>() : nullptr, q.size(0), q.size(1), q.size(2), E, Ev, F,
                          (F + 3) / 4, paths, segment};
}

// Returns (out [B, T, H, Ev], state checkpoints [B, H, segments, J, Ev, 4] and scan checkpoints
// [B, H, segments, 2 E + 1], both float64). p is read only with path 1, g only with path 2;
// empty cos, sin: no rotation.
std::vector<torch::Tensor> forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& p, const torch::Tensor& g, const torch::Tensor& clock,
                                   const torch::Tensor& cos, const torch::Tensor& sin, int64_t paths, int64_t segment) {
  std::vector<torch::Tensor> result;
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "caps_cpu_forward", [&] {
    const auto in = make_inputs<scalar_t>(q, k, v, p, g, clock, cos, sin, paths, segment);
    auto out = torch::empty({in.B, in.T, in.H, in.Ev}, q.options());
    auto f64 = q.options().dtype(torch::kFloat64);
    auto ckpt_state = torch::empty({in.B, in.H, in.segments(), in.J, in.Ev, 4}, f64);
    auto ckpt_scan = torch::empty({in.B, in.H, in.segments(), scan_size(in.E)}, f64);
    auto* states = reinterpret_cast<vec4*>(ckpt_state.data_ptr<double>());
    double* scans = ckpt_scan.data_ptr<double>();
    dispatch_width(in.E, in.Ev, [&](auto width) {
      at::parallel_for(0, in.B * in.H, 1, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
          forward_row<scalar_t, decltype(width)::value>(in, n / in.H, n % in.H, out.data_ptr<scalar_t>(),
                                                      states + n * in.segments() * in.Ev * in.J,
                                                      scans + n * in.segments() * scan_size(in.E));
        }
      });
    });
    result = {out, ckpt_state, ckpt_scan};
  });
  return result;
}

// Returns (dq, dk, dv, dp, dg, dclock, dtrig); dp is zero without path 1, dg without path 2;
// dtrig [2, T, E / 2] float64 is the gradient of the tables (cos, sin), empty without rotation.
std::vector<torch::Tensor> backward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                    const torch::Tensor& p, const torch::Tensor& g, const torch::Tensor& clock,
                                    const torch::Tensor& cos, const torch::Tensor& sin, int64_t paths, int64_t segment,
                                    const torch::Tensor& ckpt_state, const torch::Tensor& ckpt_scan,
                                    const torch::Tensor& dout) {
  std::vector<torch::Tensor> result;
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "caps_cpu_backward", [&] {
    const auto in = make_inputs<scalar_t>(q, k, v, p, g, clock, cos, sin, paths, segment);
    TORCH_CHECK(dout.is_contiguous() && dout.scalar_type() == q.scalar_type() &&
                    dout.sizes() == torch::IntArrayRef({in.B, in.T, in.H, in.Ev}),
                "caps_cpu_kernel: the output gradient must be a contiguous [B, T, H, Ev] tensor of q's dtype");
    TORCH_CHECK(ckpt_state.is_contiguous() && ckpt_scan.is_contiguous() &&
                    ckpt_state.sizes() == torch::IntArrayRef({in.B, in.H, in.segments(), in.J, in.Ev, 4}) &&
                    ckpt_scan.sizes() == torch::IntArrayRef({in.B, in.H, in.segments(), scan_size(in.E)}),
                "caps_cpu_kernel: checkpoints do not match the inputs");
    auto opts = q.options();
    auto dq = torch::empty({in.B, in.T, in.H, in.E}, opts), dk = torch::empty_like(dq);
    auto dp = in.on(1) ? torch::empty_like(dq) : torch::zeros_like(dq);
    auto dg = in.on(2) ? torch::empty_like(dq) : torch::zeros_like(dq);
    auto dv = torch::empty({in.B, in.T, in.H, in.Ev}, opts), dc = torch::empty({in.B, in.T, in.H}, opts);
    const Grads<scalar_t> grads{dq.data_ptr<scalar_t>(), dk.data_ptr<scalar_t>(), dv.data_ptr<scalar_t>(),
                            dp.data_ptr<scalar_t>(), dg.data_ptr<scalar_t>(), dc.data_ptr<scalar_t>()};
    const auto* states = reinterpret_cast<const vec4*>(ckpt_state.data_ptr<double>());
    const double* scans = ckpt_scan.data_ptr<double>();
    const int64_t trig_size = 2 * in.T * (in.E / 2);
    auto dtrig = in.cos != nullptr ? torch::zeros({at::get_num_threads(), 2, in.T, in.E / 2}, opts.dtype(torch::kFloat64))
                                   : torch::empty({0}, opts.dtype(torch::kFloat64));
    double* trig = dtrig.data_ptr<double>();
    dispatch_width(in.E, in.Ev, [&](auto width) {
      at::parallel_for(0, in.B * in.H, 1, [&](int64_t begin, int64_t end) {
        double* own = in.cos != nullptr ? trig + at::get_thread_num() * trig_size : nullptr;
        for (int64_t n = begin; n < end; ++n) {
          backward_row<scalar_t, decltype(width)::value>(in, n / in.H, n % in.H, dout.data_ptr<scalar_t>(),
                                                       states + n * in.segments() * in.Ev * in.J,
                                                       scans + n * in.segments() * scan_size(in.E), grads, own);
        }
      });
    });
    result = {dq, dk, dv, dp, dg, dc, in.cos != nullptr ? dtrig.sum(0) : dtrig};
  });
  return result;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &forward, "linear CAPS attention, forward (CPU)");
  m.def("backward", &backward, "linear CAPS attention, backward (CPU)");
}
