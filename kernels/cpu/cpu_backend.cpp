// CPU implementation of the op interface (kernels/ops.h): the kernel table of the best instruction
// set the CPU has (isa_kernels.h), run on a spinning thread pool. GEMMs read weights packed at
// load (packed_weights.h) and are split into (panel range, row range) items taken dynamically by
// the threads; attention is split into (request, head) items. Every output element is computed
// by the same sequence of operations whatever the batch, the split or the instruction set.
#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/delta_net.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/packed_weights.h"
#include "kernels/cpu/rope_table.h"
#include "kernels/cpu/thread_pool.h"

namespace pagedchat::cpu {
namespace {

using kernels::AttentionMetadata;
using kernels::PackedWeights;
using kernels::WeightPart;

// Most weight bytes per GEMM item: a quarter of a 2 MiB (or larger) L2, leaving room for the
// activations.
constexpr int64_t kChunkBytes = 512 << 10;
// Rows up to which linear() cuts the matrix into one-step items claimed guided
// (ThreadPool::parallel_guided).
constexpr int kGuidedRows = 2;
// Elementwise ops run on one thread below this many elements.
constexpr int64_t kParallelElements = 1 << 15;

class CpuBackend final : public kernels::Backend {
 public:
  CpuBackend(int num_threads, Isa isa) : pool_(num_threads), k_(isa_kernels(isa)) {
    attention_scratch_.resize(pool_.num_threads());
  }
  const char* name() const override { return "cpu"; }
  int num_threads() const override { return pool_.num_threads(); }
  std::string description() const override {
    return std::string("cpu ") + isa_name(k_.isa) + ", " + std::to_string(pool_.num_threads()) + " threads";
  }
  Isa isa() const { return k_.isa; }

  void embedding(float* out, const void* table, kernels::DType dtype, const int* ids, int T, int dim) override {
    const std::size_t row_bytes = kernels::dtype_row_bytes(dtype, dim);
    for (int t = 0; t < T; ++t)
      kernels::dequantize_row(dtype, static_cast<const uint8_t*>(table) + std::size_t(ids[t]) * row_bytes,
                              out + int64_t(t) * dim, dim);
  }

  void rms_norm(float* out, const float* x, const float* weight, int T, int dim, float eps) override {
    rows(T, dim, [&](int t) { k_.rms_norm(out + int64_t(t) * dim, x + int64_t(t) * dim, weight, dim, eps); });
  }

  void fused_add_rms_norm(float* out, float* residual, const float* y, const float* weight, int T, int dim,
                          float eps) override {
    rows(T, dim, [&](int t) {
      const int64_t o = int64_t(t) * dim;
      k_.add_rms_norm(out + o, residual + o, y + o, weight, dim, eps);
    });
  }

  void matmul(float* out, const float* x, const float* w, int T, int n, int k) override {
    const WeightPart part{w, n, kernels::DType::kF32, kernels::DType::kF32};
    CpuPackedWeights packed({&part, 1}, k);
    packed.fill(0, packed.num_panels());
    linear(out, x, packed, T);
  }

  // In bands of about kPackBand packed bytes when the caller wants the source back as it goes:
  // each band's source rows are reported once its panels are filled (a 1.1 GiB classifier then
  // holds its file pages and its packed copy together for one band, not for the whole matrix).
  std::unique_ptr<PackedWeights> pack_weights(std::span<const WeightPart> parts, int k,
                                              const SourceDone& source_done = {}) override {
    constexpr std::size_t kPackBand = 64u << 20;
    auto p = std::make_unique<CpuPackedWeights>(parts, k);
    const int n = p->num_panels();
    const int band =
        !source_done || n == 0
            ? std::max(n, 1)
            : int(std::clamp<std::size_t>(kPackBand / std::max<std::size_t>(p->bytes / n, 1), 16, std::size_t(n)));
    for (int b0 = 0; b0 < n; b0 += band) {
      const int b1 = std::min(n, b0 + band);
      pool_.parallel_chunks(b1 - b0, 16, [&](int64_t b, int64_t e, int) { p->fill(b0 + int(b), b0 + int(e)); });
      if (source_done) p->for_each_source(b0, b1, source_done);
    }
    return p;
  }

  void linear(float* out, const float* x, const PackedWeights& w, int T) override {
    const PackedWeights* const one[] = {&w};
    const int offsets[] = {0, T};
    grouped_linear(out, x, one, offsets);
  }

  // Every segment of each w[g] (packed_weights.h) into its columns of out, for rows
  // [offsets[g], offsets[g + 1]). Items: (group, segment, panel chunk, row block). A panel chunk's
  // weights (at most kChunkBytes) are read from memory once and stay in L2 while the item's rows
  // pass; rows are split into blocks only when there are too few panel chunks to keep every
  // thread busy (small matrices). Quantized segments share one quantization of x (per row: batch
  // invariant), bfloat16 ones one prepared copy; all groups' items go to the pool at once (a
  // mixture of experts: one dispatch for every routed expert, not one per expert).
  void grouped_linear(float* out, const float* x, std::span<const PackedWeights* const> w,
                      const int* offsets) override {
    const int num_groups = int(w.size());
    if (num_groups == 0) return;
    const int T = offsets[num_groups];
    if (T <= 0) return;
    const int k = w[0]->cols, n = w[0]->rows, threads = pool_.num_threads();
    bool quantized = false, bf16 = false;
    int most_rows = 0;
    int64_t total_panels = 0;
    for (int g = 0; g < num_groups; ++g) {
      if (w[g]->cols != k || w[g]->rows != n)
        throw std::invalid_argument("grouped_linear: every group's matrix must have the same shape");
      const auto& pw = static_cast<const CpuPackedWeights&>(*w[g]);
      const int rows_g = offsets[g + 1] - offsets[g];
      if (rows_g <= 0) continue;
      most_rows = std::max(most_rows, rows_g);
      quantized = quantized || pw.has_quantized();
      bf16 = bf16 || pw.has_type(kernels::DType::kBF16);
      for (const auto& s : pw.segments()) total_panels += s.num_panels;
    }
    if (quantized) {
      const int G = k / 32;
      if (xq_.size() < std::size_t(T) * k) xq_.resize(std::size_t(T) * k);
      if (xg_.size() < std::size_t(T) * G) xg_.resize(std::size_t(T) * G);
      rows(T, 4 * k, [&](int t) {
        k_.quantize_act(x + int64_t(t) * k, k, xq_.data() + int64_t(t) * k, xg_.data() + int64_t(t) * G);
      });
    }
    const int kp = (k + 1) / 2 * 2;
    if (bf16) {
      const std::size_t bytes = std::size_t(T) * kp * (k_.bf16_native ? sizeof(uint16_t) : sizeof(float));
      if (x_bf16_.size() * sizeof(float) < bytes) x_bf16_.resize(bytes / sizeof(float) + 1);
      k_.prepare_bf16(x_bf16_.data(), x, T, k, kp);
    }
    items_.clear();
    const bool guided = most_rows <= kGuidedRows;
    for (int g = 0; g < num_groups; ++g) {
      const int r0 = offsets[g], r1 = offsets[g + 1], rows_g = r1 - r0;
      if (rows_g <= 0) continue;
      const auto& segs = static_cast<const CpuPackedWeights&>(*w[g]).segments();
      for (int si = 0; si < int(segs.size()); ++si) {
        const auto& s = segs[si];
        const bool quant = kernels::dtype_is_quantized(s.type);
        const int nv = quant ? k_.gemm_q_panels : k_.gemm_nv, mr = quant ? 8 : k_.gemm_mr;
        // Chunks sized for the whole call's parallelism (a small segment is not split finer).
        int pchunk = int(
            std::min<int64_t>(total_panels / (4 * threads), kChunkBytes / std::max<int64_t>(1, s.panel_bytes)));
        // Decode (one or two rows) reuses nothing from L2: items of one kernel step, claimed guided.
        if (guided) pchunk = nv;
        pchunk = std::max(nv, pchunk / nv * nv);
        const int pchunks = (s.num_panels + pchunk - 1) / pchunk;
        int row_block = rows_g;
        const int64_t all_chunks = (total_panels + pchunk - 1) / pchunk;
        if (all_chunks < 2 * threads && rows_g > 4 * mr) {
          const int want = int((2 * threads + all_chunks - 1) / all_chunks);  // row blocks per panel chunk
          row_block = std::max((rows_g + want - 1) / want, 2 * mr);
        }
        for (int pc = 0; pc < pchunks; ++pc)
          for (int t0 = r0; t0 < r1; t0 += row_block)
            items_.push_back(
                {g, si, pc * pchunk, std::min(s.num_panels, (pc + 1) * pchunk), t0, std::min(r1, t0 + row_block)});
      }
    }
    auto run = [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) {
        Item it = items_[i];
        // Consecutive items of one segment and the same rows run as one panel range.
        while (i + 1 < e && items_[i + 1].group == it.group && items_[i + 1].segment == it.segment &&
               items_[i + 1].p0 == it.p1 && items_[i + 1].t0 == it.t0 && items_[i + 1].t1 == it.t1)
          it.p1 = items_[++i].p1;
        const auto& pw = static_cast<const CpuPackedWeights&>(*w[it.group]);
        const auto& s = pw.segments()[it.segment];
        if (kernels::dtype_is_quantized(s.type)) {
          QGemmArgs q;
          q.out = out + s.row0;
          q.ldo = n;
          q.xq = xq_.data();
          q.ldq = k;
          q.xg = xg_.data();
          q.ldg = k / 32;
          q.w = pw.segment_data(s);
          q.panel_bytes = s.panel_bytes;
          q.T = T;
          q.n = s.rows;
          q.k = k;
          k_.gemm_q[int(s.type)](q, it.p0, it.p1, it.t0, it.t1);
          continue;
        }
        GemmArgs a;
        a.out = out + s.row0;
        a.ldo = n;
        a.w = pw.segment_data(s);
        a.panel_stride = int64_t(s.padded_k) * kPanel;
        a.T = T;
        a.n = s.rows;
        a.k = s.padded_k;
        auto gemm = k_.gemm_f32;
        if (s.type == kernels::DType::kBF16) {
          a.x = x_bf16_.data();
          a.ldx = kp;
          gemm = k_.gemm_bf16;
        } else {
          a.x = x;
          a.ldx = k;
          if (s.type == kernels::DType::kF16) gemm = k_.gemm_f16;
        }
        gemm(a, it.p0, it.p1, it.t0, it.t1);
      }
    };
    if (guided)
      pool_.parallel_guided(int64_t(items_.size()), 2, run);
    else
      pool_.parallel_chunks(int64_t(items_.size()), 1, run);
  }

  void rotary_embedding(float* q, float* k, const int* positions, int T, int n_heads, int n_kv_heads,
                        const kernels::RopeSpec& rope) override {
    const int hd = rope.head_dim;
    const RopeTable::Rows* tab = rope_.prepare(positions, T, rope);
    if (!tab) return;  // NoPE
    for (int t = 0; t < T; ++t) {
      RopeTable::rotate_token(tab, q + int64_t(t) * n_heads * hd, q + int64_t(t) * n_heads * hd, n_heads, hd, positions,
                              t, rope);
      if (n_kv_heads > 0)  // 0: q only (a layer reading another layer's K/V), k may be null
        RopeTable::rotate_token(tab, k + int64_t(t) * n_kv_heads * hd, k + int64_t(t) * n_kv_heads * hd, n_kv_heads, hd,
                                positions, t, rope);
    }
  }

  void reshape_and_cache(const float* k, const float* v, void* key_cache, void* value_cache, kernels::KvDType type,
                         const int64_t* slot_mapping, int T, int kv_width) override {
    const int64_t rb = int64_t(kernels::kv_row_bytes(type, kv_width));
    for (int t = 0; t < T; ++t) {
      const int64_t slot = slot_mapping[t];
      if (slot < 0) continue;
      kernels::store_kv(static_cast<char*>(key_cache) + slot * rb, k + int64_t(t) * kv_width, kv_width, type);
      kernels::store_kv(static_cast<char*>(value_cache) + slot * rb, v + int64_t(t) * kv_width, kv_width, type);
    }
  }

  void add_bias(float* x, const float* bias, int T, int n) override {
    rows(T, n, [&](int t) { k_.add(x + int64_t(t) * n, bias, n); });
  }

  void rms_norm_heads(float* x, int64_t row_stride, const float* weight, int T, int heads, int head_dim,
                      float eps) override {
    rows(T, heads * head_dim, [&](int t) { norm_heads(x + t * row_stride, weight, heads, head_dim, eps); });
  }

  // One pass per token row: bias, q/k head norms, RoPE, cache write (the plain Llama path does only
  // the last two). Each step is the same ISA kernel the composed ops use, so the result is theirs.
  // A float32 cache takes RoPE(K) directly; a 16-bit one gets it through a per-thread row, rounded.
  void qkv_rope_and_cache(float* q, float* qkv, const int* positions, void* key_cache, void* value_cache,
                          kernels::KvDType type, const int64_t* slot_mapping, int T,
                          const kernels::QkvSpec& s) override {
    const int hd = s.head_dim, qw = s.q_width(), kvw = s.kv_width(), w = s.width();
    const int64_t rb = int64_t(kernels::kv_row_bytes(type, s.kv_row_width > 0 ? s.kv_row_width : kvw));
    const RopeTable::Rows* tab = rope_.prepare(positions, T, s.rope);  // null: NoPE, copies
    rows(T, w, [&](int t) {
      float* row = qkv + int64_t(t) * w;
      if (s.bias) k_.add(row, s.bias, w);
      if (s.q_norm) norm_heads(row, s.q_norm, s.n_heads, hd, s.norm_eps);
      if (s.k_norm) norm_heads(row + qw, s.k_norm, s.n_kv_heads, hd, s.norm_eps);
      if (s.v_norm) norm_heads(row + qw + kvw, nullptr, s.n_kv_heads, hd, s.norm_eps);
      RopeTable::rotate_token(tab, q + int64_t(t) * qw, row, s.n_heads, hd, positions, t, s.rope);
      const int64_t slot = slot_mapping[t];
      if (slot < 0) return;
      char* kdst = static_cast<char*>(key_cache) + slot * rb;
      char* vdst = static_cast<char*>(value_cache) + slot * rb;
      if (type == kernels::KvDType::kFloat32) {
        RopeTable::rotate_token(tab, reinterpret_cast<float*>(kdst), row + qw, s.n_kv_heads, hd, positions, t, s.rope);
      } else {
        thread_local std::vector<float> krow;
        if (krow.size() < std::size_t(kvw)) krow.resize(kvw);
        RopeTable::rotate_token(tab, krow.data(), row + qw, s.n_kv_heads, hd, positions, t, s.rope);
        kernels::store_kv(kdst, krow.data(), kvw, type);
      }
      kernels::store_kv(vdst, row + qw + kvw, kvw, type);
    });
  }

  void paged_attention(float* out, const float* q, const void* key_cache, const void* value_cache,
                       kernels::KvDType type, const AttentionMetadata& meta,
                       const kernels::AttentionSpec& spec) override {
    const int n_heads = spec.n_heads, n_kv_heads = spec.n_kv_heads, head_dim = spec.head_dim;
    AttentionArgs a;
    a.out = out;
    a.q = q;
    a.key_cache = key_cache;
    a.value_cache = value_cache;
    a.kv_type = type;
    a.kv_row_bytes = int64_t(kernels::kv_row_bytes(type, spec.row_width()));
    a.meta = meta;
    a.n_heads = n_heads;
    a.n_kv_heads = n_kv_heads;
    a.head_dim = head_dim;
    a.scale = spec.scale != 0.0f ? spec.scale : 1.0f / std::sqrt(float(head_dim));
    a.window = spec.sliding_window > 0 ? spec.sliding_window : 0;
    a.softcap = spec.logit_softcap > 0.0f ? spec.logit_softcap : 0.0f;
    a.sinks = spec.sinks;
    // Requests with the most work first (query tokens x context), so the last items are small.
    order_.clear();
    int max_ctx = 0;
    for (int r = 0; r < meta.num_requests; ++r) {
      if (meta.query_start_loc[r + 1] > meta.query_start_loc[r]) order_.push_back(r);
      max_ctx = std::max(max_ctx, meta.seq_lens[r]);
    }
    auto work = [&](int r) {
      const int qlen = meta.query_start_loc[r + 1] - meta.query_start_loc[r];
      return int64_t(qlen) * (a.window > 0 ? std::min(meta.seq_lens[r], a.window) : meta.seq_lens[r]);
    };
    std::stable_sort(order_.begin(), order_.end(), [&](int x, int y) { return work(x) > work(y); });
    const std::size_t scratch = std::size_t(kAttentionQueryBlock) *
                                ((attention_span(max_ctx, a.window, meta.key_ends != nullptr) + 15) / 16 * 16);
    for (auto& s : attention_scratch_)
      if (s.size() < scratch) s.resize(scratch);
    // With requests enough for every thread, a thread takes all heads of a request: its K/V rows
    // are then read by one core (one head's slice after another, the rest prefetched into that
    // core's L2) instead of by both (10% faster for 64 decoding requests).
    const int64_t items = int64_t(order_.size()) * n_heads;
    const int64_t chunk = int64_t(order_.size()) >= 4 * pool_.num_threads() ? n_heads : 1;
    pool_.parallel_chunks(items, chunk, [&](int64_t b, int64_t e, int thread) {
      for (int64_t i = b; i < e; ++i)
        k_.attention(a, order_[i / n_heads], int(i % n_heads), attention_scratch_[thread].data());
    });
  }

  void silu_and_mul(float* out, const float* gate, const float* up, int T, int hidden) override {
    const int64_t n = int64_t(T) * hidden;
    elements(n, [&](int64_t b, int64_t e) { k_.silu_and_mul(out + b, gate + b, up + b, int(e - b)); });
  }

  void silu_and_mul_stacked(float* out, const float* gate_up, int T, int hidden) override {
    rows(T, hidden, [&](int t) {
      const float* g = gate_up + int64_t(t) * 2 * hidden;
      k_.silu_and_mul(out + int64_t(t) * hidden, g, g + hidden, hidden);
    });
  }

  void add(float* x, const float* y, int64_t n) override {
    elements(n, [&](int64_t b, int64_t e) { k_.add(x + b, y + b, e - b); });
  }

  void gelu_tanh_mul(float* x, const float* y, int64_t y_stride, int T, int n) override {
    rows(T, n, [&](int t) { k_.gelu_tanh_and_mul(x + int64_t(t) * n, x + int64_t(t) * n, y + t * y_stride, n); });
  }

  void gelu_tanh_and_mul_stacked(float* out, const float* gate_up, int T, int hidden) override {
    rows(T, hidden, [&](int t) {
      const float* g = gate_up + int64_t(t) * 2 * hidden;
      k_.gelu_tanh_and_mul(out + int64_t(t) * hidden, g, g + hidden, hidden);
    });
  }

  void scale(float* x, float s, int64_t n) override {
    elements(n, [&](int64_t b, int64_t e) { k_.scale(x + b, s, e - b); });
  }

  void softcap(float* x, float cap, int64_t n) override {
    elements(n, [&](int64_t b, int64_t e) { k_.softcap(x + b, cap, e - b); });
  }

  void softmax_rows(float* x, int T, int n) override {
    rows(T, n, [&](int t) { k_.softmax(x + int64_t(t) * n, n); });
  }

  // Threads split the columns: each takes a 16-aligned column range of every row and adds the
  // contributions in s order, so a destination row repeated in `rows` is summed in the same order
  // whatever the split (deterministic; no two threads write one element).
  void scatter_add_rows(float* x, const float* y, const int* rows_, const float* weights, int S, int dim) override {
    auto run = [&](int64_t b, int64_t e) {
      for (int s = 0; s < S; ++s) k_.axpy(x + int64_t(rows_[s]) * dim + b, weights[s], y + int64_t(s) * dim + b, e - b);
    };
    if (int64_t(S) * dim < kParallelElements || dim < 64) {
      run(0, dim);
      return;
    }
    const int64_t per = std::max<int64_t>(16, (dim / pool_.num_threads() + 15) / 16 * 16);
    pool_.parallel_for(
        dim, [&](int64_t b, int64_t e) { run(b, e); }, per);
  }

  void gated_delta_net(float* out, const float* proj, const kernels::GatedDeltaNetSpec& spec,
                       const kernels::DeltaNetSequence* seqs, int num_seqs) override {
    cpu::gated_delta_net(pool_, k_, out, proj, spec, seqs, num_seqs, delta_net_scratch_);
  }

  void sigmoid_mul(float* x, const float* gate, int64_t gate_stride, int T, int n) override {
    rows(T, n, [&](int t) {
      float* xr = x + int64_t(t) * n;
      const float* g = gate + int64_t(t) * gate_stride;
      for (int i = 0; i < n; ++i) xr[i] = xr[i] / (1.0f + std::exp(-g[i]));
    });
  }

 private:
  // In-place RMSNorm of `heads` consecutive [head_dim] vectors at x.
  void norm_heads(float* x, const float* weight, int heads, int head_dim, float eps) const {
    for (int h = 0; h < heads; ++h)
      k_.rms_norm(x + int64_t(h) * head_dim, x + int64_t(h) * head_dim, weight, head_dim, eps);
  }
  // fn(t) for every row t < T; on the pool when the rows hold enough elements.
  template <typename F>
  void rows(int T, int width, const F& fn) {
    if (int64_t(T) * width < kParallelElements || T < 2) {
      for (int t = 0; t < T; ++t) fn(t);
      return;
    }
    pool_.parallel_for(T, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) fn(int(t));
    });
  }
  // fn(begin, end) over [0, n) in 16-aligned pieces.
  template <typename F>
  void elements(int64_t n, const F& fn) {
    if (n < kParallelElements) {
      fn(int64_t(0), n);
      return;
    }
    const int64_t per = (n / pool_.num_threads() + 15) / 16 * 16;
    pool_.parallel_for(
        n, [&](int64_t b, int64_t e) { fn(b, e); }, per);
  }

  ThreadPool pool_;
  const IsaKernels& k_;
  std::vector<float> delta_net_scratch_;
  RopeTable rope_;
  struct Item {
    int group, segment, p0, p1, t0, t1;
  };
  std::vector<Item> items_;                            // linear(): the work items of one call
  std::vector<int8_t> xq_;                             // activations quantized for quantized GEMMs
  std::vector<kernels::QuantActGroup> xg_;             // and their per-group scales and sums
  std::vector<float> x_bf16_;                          // activations prepared for BF16 GEMMs
  std::vector<std::vector<float>> attention_scratch_;  // per thread: scores of a query block
  std::vector<int> order_;                             // attention: requests, most work first
};

}  // namespace

std::unique_ptr<kernels::Backend> make_cpu_backend(int num_threads, Isa isa) {
  return std::make_unique<CpuBackend>(num_threads, isa_supported(isa) ? isa : detect_isa());
}

Isa backend_isa(const kernels::Backend& backend) {
  const auto* cpu = dynamic_cast<const CpuBackend*>(&backend);
  return cpu ? cpu->isa() : Isa::kScalar;
}

}  // namespace pagedchat::cpu

namespace pagedchat::kernels {

std::unique_ptr<Backend> make_cpu_backend(int num_threads) {
  return cpu::make_cpu_backend(num_threads, cpu::default_isa());
}

}  // namespace pagedchat::kernels
