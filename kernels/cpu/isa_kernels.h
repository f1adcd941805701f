// The per-instruction-set kernel table the CPU backend dispatches through. Each table is built in
// its own translation unit (kernels_scalar.cpp, kernels_avx2.cpp, kernels_avx512.cpp,
// kernels_avx512vnni.cpp, kernels_avx512bf16.cpp) from the same templated sources
// (gemm_impl.inc, quant_impl.inc, attention_impl.inc, rowwise_impl.inc) over a 16-lane vector
// type V (and its integer companion Q), so all of them compute bitwise the same float32 results;
// only the vdpbf16ps GEMM is specific to one table (it rounds activations to bfloat16).
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_features.h"
#include "kernels/ops.h"
#include "kernels/quant/quant_ref.h"

// The full-unroll pragma the vector tables put before their fixed-trip inner loops (PC_UNROLL).
// PAGEDCHAT_NO_FORCED_UNROLL (CMake: PAGEDCHAT_FORCED_UNROLL=OFF, the sanitizer builds of
// scripts/test.sh) leaves it out: unrolling changes no result bit, and with AddressSanitizer's
// checks on every access clang took 450-530 s per AVX2 / AVX-512 file with it, 46 s without.
#ifdef PAGEDCHAT_NO_FORCED_UNROLL
#define PC_FORCED_UNROLL
#else
#define PC_FORCED_UNROLL _Pragma("GCC unroll 16")
#endif

namespace pagedchat::cpu {

/// Output features per packed panel (one AVX-512 register of float32).
constexpr int kPanel = 16;

/// One GEMM out[T, n] = x[T, k] · W^T over packed panels (see packed_weights.h for the layouts).
struct GemmArgs {
  float* out = nullptr;
  int64_t ldo = 0;           ///< floats between rows of out
  const void* x = nullptr;   ///< float32 rows; for bfloat16 weights the prepared rows (prepare_bf16)
                             ///< (bfloat16 bits for the native kernel, else the floats, zero padded)
  int64_t ldx = 0;           ///< elements between rows of x
  const void* w = nullptr;   ///< packed panels
  int64_t panel_stride = 0;  ///< elements (float or uint16) between panels
  int T = 0, n = 0;
  int k = 0;  ///< reduction length: k, or for bfloat16 k rounded up to even
};

/// One quantized GEMM out[T, n] = x[T, k] · W^T over panels laid out as quant_layout.h says, with
/// x quantized per row (kernels::quantize_activation_row).
struct QGemmArgs {
  float* out = nullptr;
  int64_t ldo = 0;             ///< floats between rows of out
  const int8_t* xq = nullptr;  ///< activation quants, rows of ldq
  int64_t ldq = 0;
  const kernels::QuantActGroup* xg = nullptr;  ///< per 32-group of x, rows of ldg
  int64_t ldg = 0;
  const uint8_t* w = nullptr;  ///< the segment's first panel
  int64_t panel_bytes = 0;
  int T = 0, n = 0, k = 0;
};

constexpr int kNumDTypes = int(sizeof(kernels::kAllDTypes) / sizeof(kernels::kAllDTypes[0]));

/// What paged attention reads; item (r, h) = every query token of request r, head h.
struct AttentionArgs {
  float* out = nullptr;
  const float* q = nullptr;
  const void* key_cache = nullptr;  ///< rows of kv_type (float, uint16_t bits, q8_0 blocks)
  const void* value_cache = nullptr;
  kernels::KvDType kv_type = kernels::KvDType::kFloat32;
  int64_t kv_row_bytes = 0;  ///< bytes of one token's row: kv_row_bytes(kv_type, n_kv_heads * head_dim)
  kernels::AttentionMetadata meta;
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 0.0f;            ///< of q·k (AttentionSpec::scale resolved)
  int window = 0;                ///< sliding window (AttentionSpec), 0 = none
  float softcap = 0.0f;          ///< logit soft-cap, 0 = none
  const float* sinks = nullptr;  ///< [n_heads] attention-sink logits (AttentionSpec::sinks), null = none
};

/// Query tokens attention handles together (sharing each K/V row load).
constexpr int kAttentionQueryBlock = 4;

/// Scores one block of queries keeps for a request whose context is seq_len long: all of it, or
/// with a sliding window the window plus the block's other queries (with AttentionMetadata::
/// key_ends the window does not bound it: a query may see keys past itself).
inline int attention_span(int seq_len, int window, bool key_ends = false) {
  return !key_ends && window > 0 && window + kAttentionQueryBlock - 1 < seq_len ? window + kAttentionQueryBlock - 1
                                                                                : seq_len;
}

struct IsaKernels {
  Isa isa = Isa::kScalar;
  /// GEMM over panels [p0, p1) and rows [t0, t1); every output element is reduced over k in order
  /// (acc = fma(x, w, acc) from 0), whatever the tile it falls in.
  void (*gemm_f32)(const GemmArgs&, int p0, int p1, int t0, int t1) = nullptr;
  void (*gemm_bf16)(const GemmArgs&, int p0, int p1, int t0, int t1) = nullptr;
  /// Float16 panels (uint16, the float32 layout): widened in registers, then gemm_f32's order.
  void (*gemm_f16)(const GemmArgs&, int p0, int p1, int t0, int t1) = nullptr;
  /// Quantized panels, indexed by DType (null for F32/F16/BF16); the arithmetic of quant_ref.h.
  void (*gemm_q[kNumDTypes])(const QGemmArgs&, int p0, int p1, int t0, int t1) = {};
  /// Panels gemm_q takes at once for a single row (decode): a panel range [p0, p1) whose length is
  /// a multiple of this runs without the one-panel tail path.
  int gemm_q_panels = 1;
  /// kernels::quantize_activation_row (one row of k floats, k a multiple of 32), same results.
  void (*quantize_act)(const float* x, int k, int8_t* q, kernels::QuantActGroup* g) = nullptr;
  /// Converts x[T, k] for gemm_bf16: rows of `kp` (even) elements, zero padded; when bf16_native
  /// rounded to bfloat16 and stored as uint16 (what vdpbf16ps takes), else the floats unchanged
  /// (the emulated kernel widens the weights exactly and multiplies by float32 activations, in
  /// gemm_f32's order, so it equals gemm_f32 on the bfloat16 weights bitwise).
  void (*prepare_bf16)(void* dst, const float* x, int T, int k, int kp) = nullptr;
  bool bf16_native = false;
  /// Rows blocked per GEMM micro-tile (the T granularity of gemm_*) and panels per micro-tile.
  int gemm_mr = 1, gemm_nv = 1;
  /// Paged attention for request r, head h; scratch holds kAttentionQueryBlock *
  /// (attention_span(context, window) rounded up to 16) floats.
  void (*attention)(const AttentionArgs&, int r, int h, float* scratch) = nullptr;
  /// One row each. rms_norm's weight may be null (none).
  void (*rms_norm)(float* out, const float* x, const float* weight, int dim, float eps) = nullptr;
  void (*add_rms_norm)(float* out, float* residual, const float* y, const float* weight, int dim, float eps) = nullptr;
  void (*silu_and_mul)(float* out, const float* gate, const float* up, int n) = nullptr;
  void (*add)(float* x, const float* y, int64_t n) = nullptr;
  /// out = gelu_tanh(gate) * up (ops.h), as gate * up / (1 + exp(-2 sqrt(2/pi) (g + 0.044715 g^3))).
  void (*gelu_tanh_and_mul)(float* out, const float* gate, const float* up, int n) = nullptr;
  /// x *= s; x = cap * tanh(x / cap); x += w * y.
  void (*scale)(float* x, float s, int64_t n) = nullptr;
  void (*softcap)(float* x, float cap, int64_t n) = nullptr;
  void (*axpy)(float* x, float w, const float* y, int64_t n) = nullptr;
  /// x[0, n) = softmax(x) in place (attention_impl.inc's attention_softmax, no sink).
  void (*softmax)(float* x, int n) = nullptr;
  /// One token of the gated delta rule for one value head (rowwise_impl.inc's delta_rule_step_entry);
  /// `clamp` false skips the +-1e6 clamp of the state where the caller has shown it cannot act.
  void (*delta_rule_step)(float* S, const float* k, const float* q, const float* v, float decay, float beta,
                          float scale, int dv, int dk, bool clamp, float* o) = nullptr;
};

/// The table for `isa` (which must be supported by this CPU and compiled in: on non-x86 builds
/// only kScalar exists, and the other levels fall back to it).
const IsaKernels& isa_kernels(Isa isa);

const IsaKernels& scalar_kernels();
const IsaKernels* avx2_kernels();  ///< nullptr when not compiled in (non-x86)
const IsaKernels* avx512_kernels();
const IsaKernels* avx512vnni_kernels();
const IsaKernels* avx512bf16_kernels();

}  // namespace pagedchat::cpu
