// The op interface the model forward is written against. Two implementations: cpu/ (always) and
// cuda/ (a shared library built when nvcc is found, loaded on demand: backend_factory.h). Activations are dense
// row-major float32; weight matrices are packed once (pack_weights) from any DType (kernels/quant/dtype.h); the paged
// KV cache holds a KvDType; "T" is the number of tokens in the flattened batch (prefill and decode tokens mixed).
// Formulas follow llama2.c's run.c (karpathy/llama2.c) and vLLM's csrc/ kernels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/quant/dtype.h"

namespace pagedchat::kernels {

/// Where each token of a flattened batch reads its context from the paged KV cache.
/// Request r owns tokens [query_start_loc[r], query_start_loc[r+1]); after this step its context is
/// seq_lens[r] tokens long, so its token j (0-based in the step) sits at position
/// seq_lens[r] - query_len_r + j and attends to positions 0..that (causal).
struct AttentionMetadata {
  const int* query_start_loc = nullptr;  ///< [num_requests + 1]
  const int* seq_lens = nullptr;         ///< [num_requests]
  const int* block_tables = nullptr;     ///< [num_requests * max_blocks_per_seq], block ids
  int max_blocks_per_seq = 0;
  int num_requests = 0;
  int block_size = 0;  ///< tokens per KV block
  /// Host-side sizes for backends that launch work from the host (CUDA): T, the largest query
  /// length and the longest context of the step. 0 = not given (the CPU backend does not need them).
  int num_tokens = 0;
  int max_query_len = 0;
  int max_seq_len = 0;
  /// [num_tokens] or null: per query token the end (exclusive) of the key positions it sees,
  /// when that lies past the token itself — Gemma 3's image tokens attend to every token of their
  /// image (bidirectionally) as well as causally before it; a sliding window still bounds the keys
  /// before the query. An entry <= the token's position + 1 means causal. Never past the request's
  /// seq_len (those keys are in the cache by the time the step attends). OpFeature::kKeyEnds.
  const int* key_ends = nullptr;
  /// [num_tokens] or null (read only with key_ends): per query token the first key position it
  /// sees when that lies before its sliding window — transformers' Gemma 4 mask ORs the image
  /// block with the window, so an image token sees its whole image on sliding-window layers too.
  /// An entry at or past the window's first key changes nothing.
  const int* key_begins = nullptr;
};

/// The rotary embedding of a model (RoFormer, Su et al. 2021; vLLM's RotaryEmbedding): the first
/// `rotary_dim` elements of every head rotate, pair i (i < rotary_dim / 2) by the angle
/// position * inv_freq[i] radians; elements rotary_dim .. head_dim-1 pass unchanged (partial
/// rotary: HF's partial_rotary_factor, rotate_half over q[..., :rotary_dim]; llama.cpp's
/// ggml_rope_ext with n_dims < head_dim). Which elements form pair i: (2i, 2i+1)
/// ("interleaved", llama2.c, Meta's Llama, GGUF `llama`), or with `neox` (i, i + rotary_dim/2)
/// (Hugging Face's rotate_half, GGUF `qwen2`/`qwen3`). Frequency scaling (linear, llama3, GGUF
/// rope_freqs) is already folded into inv_freq by the caller. inv_freq == nullptr: the layer has
/// no positional rotation at all (NoPE layers, e.g. SmolLM3's every 4th layer): rotary_embedding
/// changes nothing, qkv_rope_and_cache still adds the bias, normalises heads and writes the cache.
/// Backends may cache per-position cos/sin keyed by the inv_freq pointer and rotary_dim: the
/// values a pointer designates must not change while the model lives (keep one array per rope).
struct RopeSpec {
  int head_dim = 0;  ///< even
  bool neox = false;
  const double* inv_freq = nullptr;  ///< [rotary_dims() / 2] radians per position, or null (NoPE)
  int rotary_dim = 0;                ///< even, <= head_dim; 0 = head_dim (the whole head rotates)
  int rotary_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  /// Interleaved M-RoPE (Qwen3-VL; transformers apply_interleaved_mrope): [T, 3] positions (t, h,
  /// w) per token, used instead of the op's positions. Rotated pair i takes h when i % 3 == 1 and
  /// i < 3 * mrope_sections[1], w when i % 3 == 2 and i < 3 * mrope_sections[2], else t. Null:
  /// every pair takes the token's position. OpFeature::kMRope.
  const int* mrope_positions = nullptr;
  std::array<int, 3> mrope_sections{};
};

/// The default inverse frequencies theta^(-2i / head_dim), i < head_dim / 2, in float64 (as
/// transformers' _compute_default_rope_parameters, without its float32 rounding).
std::vector<double> rope_default_inv_freq(int head_dim, double theta);

/// The attention of one layer (what paged_attention computes besides the cache layout).
/// score(q, k) = scale * q·k; with logit_softcap > 0, score = cap * tanh(score / cap) (Gemma 2's
/// attn_logit_softcapping: after scaling, before the softmax); out = softmax(scores) · V over the
/// keys the query sees: causal, and with sliding_window > 0 only the last `sliding_window`
/// positions, its own included (the query at position p sees keys k with
/// p - sliding_window < k <= p: HF Gemma / Mistral, vLLM, llama.cpp's SWA mask).
struct AttentionSpec {
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;  ///< n_heads a multiple of n_kv_heads
  float scale = 0.0f;                             ///< 0 = 1 / sqrt(head_dim) (Gemma 3: query_pre_attn_scalar^-0.5)
  int sliding_window = 0;                         ///< keys a query sees, itself included; 0 = all (causal)
  float logit_softcap = 0.0f;                     ///< > 0: cap of the scores; 0 = none
  /// Attention sinks (gpt-oss attn_sinks): [n_heads] learned logits, in backend memory, one per
  /// query head, that join each softmax as an extra column whose weight is dropped:
  /// w_p = exp(s_p - m) / (sum_j exp(s_j - m) + exp(sink_h - m)), m the max over scores and sink
  /// (transformers modeling_gpt_oss.py eager_attention_forward). Null: none.
  const float* sinks = nullptr;
  /// Elements of one token's row in the caches; 0 = n_kv_heads * head_dim. Wider when the cache's
  /// rows are sized for another layer's heads (Gemma 4's local and global layers differ): this
  /// layer reads the first n_kv_heads * head_dim of each row (OpFeature::kMixedHeadSizes).
  int kv_row_width = 0;
  int64_t row_width() const { return kv_row_width > 0 ? kv_row_width : int64_t(n_kv_heads) * head_dim; }
};

/// Optional features of the op interface that a backend may lack (Backend::supports); the engine
/// checks the ones a model needs before it picks a backend.
enum class OpFeature {
  kSlidingWindow,     ///< AttentionSpec::sliding_window > 0
  kAttentionScale,    ///< AttentionSpec::scale != 0
  kLogitSoftcap,      ///< AttentionSpec::logit_softcap > 0
  kPartialRotary,     ///< RopeSpec::rotary_dim < head_dim
  kNoRope,            ///< RopeSpec::inv_freq == nullptr
  kGeluTanh,          ///< gelu_tanh_and_mul_stacked
  kScale,             ///< scale(), softcap() and softmax_rows()
  kMixtureOfExperts,  ///< scatter_add_rows
  kGatedDeltaNet,     ///< gated_delta_net and sigmoid_mul (Qwen3.5's linear attention and attention output gate)
  kAttentionSinks,    ///< AttentionSpec::sinks (gpt-oss)
  kSwigluOai,         ///< swiglu_oai_stacked (gpt-oss's clamped SwiGLU)
  kMixedHeadSizes,    ///< AttentionSpec / QkvSpec kv_row_width wider than the layer's K/V (Gemma 4)
  kKeyEnds,           ///< AttentionMetadata::key_ends (bidirectional attention among image tokens)
  kMRope,             ///< RopeSpec::mrope_positions (Qwen3-VL's image positions)
};
/// Human words for a feature, for messages: "sliding-window attention", "partial rotary embedding".
const char* op_feature_name(OpFeature feature);

/// What the attention prologue does to one row of a stacked Q/K/V linear() output, per model:
/// [q: n_heads*head_dim | k: n_kv_heads*head_dim | v: n_kv_heads*head_dim]. In order: add `bias`
/// (Qwen2's q/k/v biases); RMSNorm of every query head with `q_norm` and every key head with
/// `k_norm` (Qwen3, transformers modeling_qwen3.py: after the projection, before RoPE); RoPE of q
/// and k with `rope`; then q goes to the query buffer and k, v into the paged cache.
struct QkvSpec {
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  const float* bias = nullptr;    ///< [(n_heads + 2*n_kv_heads) * head_dim], or null (no bias)
  const float* q_norm = nullptr;  ///< [head_dim] weight of the per-head RMSNorm of q, or null
  const float* k_norm = nullptr;  ///< [head_dim] weight for k; set together with q_norm
  float norm_eps = 0.0f;          ///< epsilon of those norms
  RopeSpec rope;                  ///< rope.head_dim == head_dim
  /// A weightless RMSNorm of every value head (Gemma 4: v / sqrt(mean(v^2) + norm_eps)), after the
  /// bias, before the cache write.
  bool v_norm = false;
  /// Elements of one token's cache row; 0 = kv_width() (see AttentionSpec::kv_row_width).
  int kv_row_width = 0;
  int q_width() const { return n_heads * head_dim; }
  int kv_width() const { return n_kv_heads * head_dim; }
  int width() const { return (n_heads + 2 * n_kv_heads) * head_dim; }
};

/// The shape of a Gated DeltaNet layer's recurrent core (Backend::gated_delta_net; the fields of
/// ModelConfig::linear_attn). C = conv_dim = 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim.
struct GatedDeltaNetSpec {
  int num_k_heads = 0, num_v_heads = 0, head_k_dim = 0, head_v_dim = 0, conv_kernel = 0;
  /// Which key head value head j reads: false, j % num_k_heads (the value heads tiled over the
  /// key heads: GGUF files, whose converter reorders them); true, j / (num_v_heads / num_k_heads)
  /// (grouped: each key head serves consecutive value heads, as Hugging Face checkpoints store them).
  bool v_heads_grouped = false;
  float norm_eps = 1e-6f;          ///< floor of the q/k L2 norms and eps of the output RMSNorm
  const float* conv1d = nullptr;   ///< [C, conv_kernel] taps per channel, oldest input first
  const float* dt_bias = nullptr;  ///< [num_v_heads]
  const float* a = nullptr;        ///< [num_v_heads], negative (-exp(A_log))
  const float* norm = nullptr;     ///< [head_v_dim] weight of the per-head output RMSNorm
  int conv_dim() const { return 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim; }
  int value_dim() const { return num_v_heads * head_v_dim; }
  /// The key head value head j reads (v_heads_grouped).
  int key_head(int j) const { return v_heads_grouped ? j / (num_v_heads / num_k_heads) : j % num_k_heads; }
  /// Row width of the projection gated_delta_net reads: [qkv C | z value_dim | b num_v_heads | a num_v_heads].
  int proj_width() const { return conv_dim() + value_dim() + 2 * num_v_heads; }
  /// Floats of one sequence's state for one layer: the conv's last conv_kernel - 1 inputs
  /// ([conv_kernel - 1][C], oldest first), then per value head a [head_v_dim][head_k_dim] matrix.
  int64_t state_floats() const {
    return int64_t(conv_kernel - 1) * conv_dim() + int64_t(num_v_heads) * head_v_dim * head_k_dim;
  }
};

/// One sequence's tokens in a gated_delta_net call.
struct DeltaNetSequence {
  int start = 0, len = 0;  ///< rows [start, start + len) of the projection and the output
  float* state = nullptr;  ///< its state (GatedDeltaNetSpec::state_floats()), read and updated in place
  /// Prefix-cache checkpoints at block boundaries, and the state speculative decoding rolls back
  /// to: for i < num_saves, the state after save_after[i] of its tokens (1..len) is also copied to
  /// save_to[i].
  static constexpr int kMaxSaves = 3;
  int num_saves = 0;
  int save_after[kMaxSaves] = {};
  float* save_to[kMaxSaves] = {};
};

/// Element type of the paged KV cache (vLLM's kv_cache_dtype). K and V are written in it and read
/// back widened to float32, exactly; attention arithmetic is float32. kFloat32 takes 4 bytes per
/// element; kBFloat16 and kFloat16 2 (uint16_t bits, rounded to nearest even); kQ8_0 is ggml's
/// block_q8_0 (ggml-common.h): per 32 consecutive elements of a token's row, an f16 scale d then
/// 32 int8 quants, 34 bytes (1.0625 per element), quantized as quantize_row_q8_0_ref does
/// (d = max|x| / 127, q = round(x / d)); it needs rows (n_kv_heads * head_dim) and heads
/// (head_dim) that are whole 32-element blocks.
enum class KvDType { kFloat32, kBFloat16, kFloat16, kQ8_0 };

/// Bytes of n consecutive cache elements of `type` (n = kv_width: one token's K or V row; or
/// several rows back to back). Throws std::invalid_argument for kQ8_0 when n is not a multiple
/// of 32.
std::size_t kv_row_bytes(KvDType type, int64_t n);
/// Elements a kQ8_0 block holds (32); 1 for the other types.
int kv_block_elems(KvDType type);
/// "float32", "bfloat16", "float16" or "q8_0".
const char* kv_dtype_name(KvDType type);

/// One matrix of a stack packed into one PackedWeights: `rows` rows of k values of type `dtype`
/// (dtype_row_bytes(dtype, k) bytes each, back to back, any alignment) at `data`, held after
/// packing as `packed`: `dtype` itself (quantized weights stay quantized), or F32 / F16 / BF16
/// (dequantized, then rounded to nearest even).
struct WeightPart {
  const void* data = nullptr;
  int rows = 0;
  DType dtype = DType::kF32;
  DType packed = DType::kF32;
};

/// Throws std::invalid_argument unless `part` is packable with k columns: data set, rows >= 0, k a
/// whole number of dtype's blocks, packed == dtype or one of F32 / F16 / BF16.
void check_weight_part(const WeightPart& part, int k);

/// A weight matrix prepared by Backend::pack_weights in the layout the backend's linear() reads:
/// one or more [rows_i, k] matrices stacked along the output dimension (Q, K and V as one matrix;
/// gate and up as another), so one linear() computes them all; each part keeps its own type (a
/// Q4_K_M file mixes Q4_K and Q6_K in one stack).
class PackedWeights {
 public:
  virtual ~PackedWeights() = default;
  int rows = 0;           ///< n: output features (sum of the parts' rows)
  int cols = 0;           ///< k: input features
  std::size_t bytes = 0;  ///< memory the packed copy holds
};

/// Memory a backend's ops read and write (Backend::allocate): host memory for the CPU backend,
/// device memory for a GPU one. Freed with the object.
class Buffer {
 public:
  virtual ~Buffer() = default;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 protected:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// `bytes` of zero-filled, 64-byte aligned host memory (what the CPU backend's allocate() gives); from
/// 2 MiB up its pages become resident only when first written. Throws std::bad_alloc.
std::unique_ptr<Buffer> allocate_host(std::size_t bytes);

/// The op interface. Every pointer an op takes (activations, weights, the KV cache, the
/// metadata's arrays, RoPE frequencies, norms, biases) is in the backend's memory: memory from
/// allocate() or place(), or host memory on the CPU backend (where backend memory is host
/// memory). Methods never throw (except pack_weights and the allocation / copy methods, on
/// allocation failure or a device error); callers validate shapes. The ops after `add` have
/// default implementations composed from the ones before, so a backend only overrides what it can
/// do faster. A backend is used from one thread at a time.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int num_threads() const = 0;
  /// What runs the ops, for logs and the bench output: "cpu avx2, 4 threads",
  /// "cuda:0 NVIDIA H200 (sm_90, 139.8 GiB)".
  virtual std::string description() const { return name(); }

  /// `bytes` of zero-filled backend memory (64-byte aligned). Throws std::bad_alloc (host) or
  /// std::runtime_error naming the size and what is free (device) when it cannot be had.
  virtual std::unique_ptr<Buffer> allocate(std::size_t bytes);
  /// Copies `bytes` from host memory `src` to backend memory `dst` (in order with the ops).
  virtual void copy_to_backend(void* dst, const void* src, std::size_t bytes);
  /// Copies `bytes` from backend memory `src` to host memory `dst`, after every op before it has
  /// finished. Throws std::runtime_error when the device reported an error since the last copy.
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes);
  /// Copies `bytes` within backend memory (KV-cache copy-on-write).
  virtual void copy_in_backend(void* dst, const void* src, std::size_t bytes);
  /// Host data `src` [bytes] as backend memory for ops to read, for as long as `holder` and `src`
  /// live: `src` itself on the CPU backend (no copy: the model's embedding table stays mapped),
  /// a copy in `holder` on a device.
  virtual const void* place(const void* src, std::size_t bytes, std::unique_ptr<Buffer>& holder);
  /// The token-embedding table `table` [vocab, dim] of `dtype` as embedding() reads it on this
  /// backend; sets *packed to the type it is then in. Default: place() of the table as it is.
  virtual const void* place_embedding(const void* table, DType dtype, int vocab, int dim,
                                      std::unique_ptr<Buffer>& holder, DType* packed);
  /// True with the device's free and total bytes when the backend computes in device memory of
  /// its own (the engine sizes the KV cache from them); false for host memory.
  virtual bool device_memory_info(std::size_t* free_bytes, std::size_t* total_bytes);
  /// The weight type an "auto" policy should pack an unquantized matrix of type `file` as
  /// (the CPU: `file` itself; a GPU: 16 bits, as vLLM's dtype "auto" does for float32 checkpoints).
  virtual DType auto_weight_type(DType file) const { return file; }
  /// out[S, dim] = x[rows[s], :] for s < S (the rows whose logits are wanted).
  virtual void gather_rows(float* out, const float* x, const int* rows, int S, int dim);

  /// out[T, dim] = table[ids[t], :] as float32; table is [vocab, dim] of `dtype` (rows of
  /// dtype_row_bytes(dtype, dim) bytes), dequantized with dequantize_row's formulas.
  virtual void embedding(float* out, const void* table, DType dtype, const int* ids, int T, int dim) = 0;
  /// RMSNorm: out = weight * x / sqrt(mean(x^2) + eps), per row of x[T, dim].
  virtual void rms_norm(float* out, const float* x, const float* weight, int T, int dim, float eps) = 0;
  /// out[T, n] = x[T, k] · w[n, k]^T. Each output element is reduced in the same order whatever T
  /// is, so a request's results do not depend on what else is in the batch (batch invariance).
  virtual void matmul(float* out, const float* x, const float* w, int T, int n, int k) = 0;
  /// Rotary embedding (see RopeSpec) of q [T, n_heads*head_dim] and k [T, n_kv_heads*head_dim]
  /// in place; token t is at positions[t] (>= 0). n_kv_heads may be 0 (k unused, may be null).
  virtual void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                                const RopeSpec& rope) = 0;
  /// Writes k, v [T, kv_width] into the caches [num_slots, kv_width] of element type `cache_type`
  /// at slot_mapping[t] (slot = block_id * block_size + offset), as store_kv() converts; a
  /// negative slot marks padding and is skipped.
  virtual void reshape_and_cache(const float* k, const float* v, void* key_cache, void* value_cache, KvDType cache_type,
                                 const int64_t* slot_mapping, int T, int kv_width) = 0;
  /// Causal grouped-query attention over the paged cache as `spec` says (AttentionSpec:
  /// softmax(softcap(scale * q·k)) · v over the keys in the window); query head h reads KV head
  /// h / (n_heads / n_kv_heads). out, q: [T, n_heads*head_dim]. The caches' elements (of
  /// `cache_type`) are widened to float32 exactly, so the result is bitwise that of a float32
  /// cache holding the same values. With a sliding window, block-table entries of blocks that lie
  /// wholly before a request's earliest query's window are never read (the KV-cache manager may
  /// have freed those blocks: their entries can hold any value), nor are their slots.
  virtual void paged_attention(float* out, const float* q, const void* key_cache, const void* value_cache,
                               KvDType cache_type, const AttentionMetadata& meta, const AttentionSpec& spec) = 0;
  /// SwiGLU: out = silu(gate) * up, silu(x) = x / (1 + exp(-x)); all [T, hidden].
  virtual void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden) = 0;
  /// x[n] += y[n].
  virtual void add(float* x, const float* y, int64_t n) = 0;

  /// Called by pack_weights with a range of a part's bytes (whole rows) it will not read again,
  /// while it is still packing: the caller may drop them (a mapped file's pages), so a large
  /// matrix's source and its packed copy are never resident together in full.
  using SourceDone = std::function<void(const void* data, std::size_t bytes)>;
  /// Packs `parts` (stacked along the output dimension, each [rows_i, k], see WeightPart) for
  /// linear(). The originals are not referenced afterwards. `source_done` (optional) hears of the
  /// parts' rows as they are finished, in bands (a backend that copies in one go may report
  /// nothing: the caller releases the whole parts after). Throws std::invalid_argument when k
  /// is not a whole number of a part's blocks or a conversion is not one WeightPart allows.
  virtual std::unique_ptr<PackedWeights> pack_weights(std::span<const WeightPart> parts, int k,
                                                      const SourceDone& source_done = {});
  /// out[T, n] = x[T, k] · w^T. Batch invariant: row t of out depends only on row t of x, bitwise,
  /// whatever T is. Float32 weights give the same values as matmul() on the unpacked matrix.
  virtual void linear(float* out, const float* x, const PackedWeights& w, int T);
  /// A grouped GEMM (vLLM's fused_moe step): for each group g, rows [offsets[g], offsets[g+1]) of
  /// out[T, n] = the same rows of x[T, k] · w[g]^T, with T = offsets[w.size()]; offsets (host memory)
  /// non-decreasing from 0, a group may have no rows. Every w[g] has the same [n, k]
  /// (std::invalid_argument otherwise). Each row's result is bitwise linear()'s on that row; the
  /// default runs linear() per group, a backend may run every group in one dispatch.
  virtual void grouped_linear(float* out, const float* x, std::span<const PackedWeights* const> w, const int* offsets);
  /// vLLM's fused_add_rms_norm: residual += y, then out = rms_norm(residual) with `weight`, per row
  /// of [T, dim]. out may alias y.
  virtual void fused_add_rms_norm(float* out, float* residual, const float* y, const float* weight, int T, int dim,
                                  float eps);
  /// SwiGLU on the output of a stacked gate+up linear(): gate_up is [T, 2*hidden] (gate in the
  /// first half of each row, up in the second); out[T, hidden] = silu(gate) * up.
  virtual void silu_and_mul_stacked(float* out, const float* gate_up, int T, int hidden);
  /// x[t, :] += bias for every row of x [T, n] (the bias of a linear layer: Qwen2's q/k/v, Llama's
  /// attention_bias o_proj).
  virtual void add_bias(float* x, const float* bias, int T, int n);
  /// RMSNorm of each of `heads` consecutive [head_dim] vectors starting every `row_stride` floats
  /// (token t's heads at x + t*row_stride), in place, with one `weight` [head_dim] for all heads:
  /// Qwen3's q_norm / k_norm inside the stacked Q/K/V rows. Same formula as rms_norm; a null
  /// `weight` means none (x / sqrt(mean(x^2) + eps): a weightless RMSNorm).
  virtual void rms_norm_heads(float* x, int64_t row_stride, const float* weight, int T, int heads, int head_dim,
                              float eps);
  /// The attention prologue on the output of a stacked Q/K/V linear(): qkv is [T, spec.width()]
  /// and is modified in place (bias added, q/k heads normalised) when the spec asks for it. Writes
  /// RoPE(Q) to q [T, n_heads*head_dim] and RoPE(K), V into the caches at slot_mapping (negative
  /// slots skipped): bitwise what add_bias, rms_norm_heads, rotary_embedding and
  /// reshape_and_cache give in that order.
  virtual void qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                                  KvDType cache_type, const int64_t* slot_mapping, int T, const QkvSpec& spec);

  /// GeGLU with the tanh GELU on the output of a stacked gate+up linear() (Gemma): gate_up is
  /// [T, 2*hidden] (gate in the first half of each row, up in the second); out[T, hidden] =
  /// gelu_tanh(gate) * up, gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  /// (ggml_gelu, HF's gelu_pytorch_tanh), float32 to within ~1e-6 relative.
  virtual void gelu_tanh_and_mul_stacked(float* out, const float* gate_up, int T, int hidden);
  /// gpt-oss's clamped SwiGLU on stacked rows [gate | up] of gate_up [T, 2*hidden] into out [T, hidden]:
  /// g = min(gate, limit), u = clamp(up, -limit, limit), out = (u + 1) * g * sigmoid(alpha * g)
  /// (transformers modeling_gpt_oss.py GptOssExperts: alpha 1.702, limit 7; ggml's swiglu_oai).
  virtual void swiglu_oai_stacked(float* out, const float* gate_up, int T, int hidden, float alpha, float limit);
  /// x[n] *= s (Gemma's embedding scale sqrt(hidden), logit scales).
  virtual void scale(float* x, float s, int64_t n);
  /// x[n] = cap * tanh(x / cap), cap > 0 (Gemma 2's final_logit_softcapping).
  virtual void softcap(float* x, float cap, int64_t n);
  /// Each of T rows of n floats (contiguous) replaced in place by its softmax: exp(x - max) / sum
  /// (float32, exp to ~1 ulp; the unmasked attention of the vision encoders).
  virtual void softmax_rows(float* x, int T, int n);
  /// The combine step of a mixture of experts: x[rows[s], :] += weights[s] * y[s, :] for s < S, in
  /// increasing s; x is [*, dim], y [S, dim], rows (< x's rows) may repeat: a destination row gets
  /// its contributions in the order of s, so the result is deterministic and a row's value
  /// depends only on its own (row, weight, y) entries and their order, not on S or the other rows
  /// (batch invariance when the caller orders each token's experts the same way).
  virtual void scatter_add_rows(float* x, const float* y, const int* rows, const float* weights, int S, int dim);

  /// The recurrent core of a Gated DeltaNet layer (Yang et al., "Gated Delta Networks", 2024;
  /// transformers modeling_qwen3_next.py torch_recurrent_gated_delta_rule; the GGUF conventions of
  /// ik_llama.cpp's delta_net). proj [T, spec.proj_width()] holds each token's input projections
  /// [qkv | z | b | a]; out [T, value_dim] receives, per token and value head j:
  ///   x = silu(causal depthwise conv1d over the conv state and qkv)   (its state updated)
  ///   q, k = x's key head spec.key_head(j), each / max(||.||, norm_eps); v = x's value head j
  ///   g = a_j * softplus(a_in_j + dt_bias_j); beta = sigmoid(b_j)
  ///   S = exp(g) S;  S += beta (v - S k) k^T;  o = S q / sqrt(head_k_dim)
  ///   out = rms_norm(o) * norm * silu(z_j)
  /// The sequences' tokens are processed in order; S and the conv state persist in seq.state.
  /// Subnormal values of S are flushed to zero (a strongly decaying head would otherwise crawl
  /// through microcode assists; every level flushes alike).
  /// Default: throws std::logic_error (supports(kGatedDeltaNet) is false for such a backend).
  virtual void gated_delta_net(float* out, const float* proj, const GatedDeltaNetSpec& spec,
                               const DeltaNetSequence* seqs, int num_seqs);
  /// x[i] *= sigmoid(gate[i]) for each of T rows of n values (x rows contiguous, gate rows
  /// gate_stride apart): the attention output gate of Qwen3.5. Default: a host loop.
  virtual void sigmoid_mul(float* x, const float* gate, int64_t gate_stride, int T, int n);
  /// x[i] = gelu_tanh(x[i]) * y[i] for each of T rows of n values (x rows contiguous, y rows
  /// y_stride apart; gelu_tanh as gelu_tanh_and_mul_stacked): Gemma 4's per-layer input gate.
  /// Default: a host loop (OpFeature::kGeluTanh).
  virtual void gelu_tanh_mul(float* x, const float* y, int64_t y_stride, int T, int n);

  /// Whether this backend implements `feature` (OpFeature); an op given a spec that needs a
  /// feature the backend lacks fails (a device backend reports an error, the CPU backend supports
  /// everything).
  virtual bool supports(OpFeature feature) const {
    (void)feature;
    return true;
  }
};

/// dst[0, kv_row_bytes(type, n)) = src[0, n) in `type`: float32 copied, bfloat16 / float16
/// rounded as float_to_bf16 / fp32_to_fp16 (dst holds their uint16_t bits), q8_0 quantized per 32
/// values (a block holding a non-finite value gets d = NaN, so it reads back as NaN, never as a
/// wrong finite number). n must be a multiple of kv_block_elems(type).
void store_kv(void* dst, const float* src, int64_t n, KvDType type);
/// dst[0, n) = the floats src (kv_row_bytes(type, n) bytes) of `type` hold (exact; q8_0: d * q,
/// exact in float32).
void load_kv(float* dst, const void* src, int64_t n, KvDType type);

/// The threaded CPU implementation; num_threads <= 0 means all hardware threads. Kernels for the
/// instruction set cpu::default_isa() picks (kernels/cpu/cpu_features.h; $PAGEDCHAT_CPU_ISA).
/// Code outside kernels/ picks a backend with make_backend (kernels/backend_factory.h) instead.
std::unique_ptr<Backend> make_cpu_backend(int num_threads);

}  // namespace pagedchat::kernels
