#include "engine/loader/gguf/gguf_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"
#include "engine/model/rope_frequencies.h"

namespace pagedchat {
namespace {

using load::kMaxDim;
using load::kMaxHeads;
using load::kMaxLayers;
using load::kMaxPositions;
using load::kMaxVocab;
using load::shape_str;

[[noreturn]] void fail(const GgufFile& f, const std::string& what) {
  throw std::runtime_error("'" + f.name() + "': " + what);
}

int64_t required_int(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi) {
  const std::optional<int64_t> v = f.get_int(key);
  if (!v) fail(f, "required key '" + key + "' is missing");
  if (*v < lo || *v > hi)
    fail(f, "key '" + key + "' is " + std::to_string(*v) + ", outside [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return *v;
}

std::vector<uint64_t> trimmed(std::vector<uint64_t> ne) {
  while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
  return ne;
}

// Turns the file's tensors into weights, checking names, shapes and types: matrices stay in the
// file's type, used in place from the mapping (copied when the bytes were parsed from memory);
// vectors (norms, biases, rope_freqs) become float32 (in place when F32 and aligned).
class TensorLoader {
 public:
  TensorLoader(GgufFile& f, LoadedModel& m) : f_(f), m_(m) {}

  /// The matrix `name` of shape [rows, cols], in its file type.
  WeightTensor matrix(const std::string& name, uint64_t rows, uint64_t cols) {
    const GgufTensorInfo& t = find(name, rows, cols);
    const kernels::DType dt = *dtype_of(t.type);
    if (cols % uint64_t(kernels::dtype_block_elems(dt)) != 0)
      fail(f_, "tensor '" + name + "' is " + ggml_type_name(uint32_t(t.type)) + " with rows of " +
                   std::to_string(cols) + " values, not a whole number of its blocks");
    const uint8_t* src = f_.tensor_data(t);
    check_blocks(t, dt, src);
    if (f_.mapped()) {
      keep_mapping_ = true;
      return {src, dt};
    }
    const std::size_t n = kernels::dtype_row_bytes(dt, int64_t(cols)) * std::max<uint64_t>(rows, 1);
    unsigned char* dst = m_.allocate_bytes(n);
    std::memcpy(dst, src, n);
    return {dst, dt};
  }

  /// The 3-D tensor `name` of shape [n, rows, cols] (n matrices back to back: experts), in its
  /// file type, as one WeightTensor at its first byte.
  WeightTensor matrix3(const std::string& name, uint64_t n, uint64_t rows, uint64_t cols) {
    const GgufTensorInfo& t = find3(name, n, rows, cols);
    const kernels::DType dt = *dtype_of(t.type);
    if (cols % uint64_t(kernels::dtype_block_elems(dt)) != 0)
      fail(f_, "tensor '" + name + "' is " + ggml_type_name(uint32_t(t.type)) + " with rows of " +
                   std::to_string(cols) + " values, not a whole number of its blocks");
    const uint8_t* src = f_.tensor_data(t);
    check_blocks(t, dt, src);
    if (f_.mapped()) {
      keep_mapping_ = true;
      return {src, dt};
    }
    const std::size_t bytes = kernels::dtype_row_bytes(dt, int64_t(cols)) * rows * n;
    unsigned char* dst = m_.allocate_bytes(bytes);
    std::memcpy(dst, src, bytes);
    return {dst, dt};
  }

  /// The tensor `name` of shape [rows, cols] (rows == 0: a vector of cols) as float32.
  const float* get(const std::string& name, uint64_t rows, uint64_t cols) {
    const GgufTensorInfo& t = find(name, rows, cols);
    const uint8_t* src = f_.tensor_data(t);
    if (t.type == GgmlType::F32 && f_.mapped() && reinterpret_cast<std::uintptr_t>(src) % alignof(float) == 0) {
      keep_mapping_ = true;
      return reinterpret_cast<const float*>(src);
    }
    float* dst = m_.allocate(t.n_elements);
    dequantize(t.type, src, dst, t.n_elements);
    return dst;
  }
  /// As get(), or null when the file has no tensor `name`.
  const float* get_optional(const std::string& name, uint64_t rows, uint64_t cols) {
    return has(name) ? get(name, rows, cols) : nullptr;
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

  /// Refuses tensors nothing used (a variant this loader would run wrongly); keeps the mapping if needed.
  void finish(const std::string& arch) {
    for (const auto& t : f_.tensors())
      if (!used_.count(t.name))
        fail(f_, "tensor '" + t.name + "' is not part of a '" + arch +
                     "' model this engine runs (unsupported variant: " +
                     (t.name.find("bias") != std::string::npos   ? "a bias this architecture does not have"
                      : t.name.find("exps") != std::string::npos ? "mixture of experts"
                                                                 : "unknown tensor") +
                     ")");
    if (keep_mapping_) m_.files.push_back(f_.take_mapping());
  }

 private:
  // Block fields whose values have no meaning: an MXFP4 block's E8M0 exponent 0xFF (NaN in OCP MX
  // v1.0) would make every weight of the block NaN.
  void check_blocks(const GgufTensorInfo& t, kernels::DType dt, const uint8_t* src) const {
    if (dt != kernels::DType::kMXFP4) return;
    int64_t bad = 0;
    if (!kernels::mxfp4_row_valid(src, int64_t(t.n_elements), &bad))
      fail(f_, "tensor '" + t.name + "': MXFP4 block " + std::to_string(bad) +
                   " has scale exponent 0xFF (NaN in E8M0): the file is damaged");
  }
  const GgufTensorInfo& find3(const std::string& name, uint64_t n, uint64_t rows, uint64_t cols) {
    const GgufTensorInfo* t = f_.find_tensor(name);
    if (!t) fail(f_, "required tensor '" + name + "' is missing");
    used_.insert(name);
    const std::vector<uint64_t> want = {cols, rows, n};
    if (t->ne.size() > 3 || t->ne.size() < 1 || std::vector<uint64_t>(t->ne.begin(), t->ne.end()) != want) {
      std::vector<uint64_t> padded = t->ne;
      while (padded.size() < 3) padded.push_back(1);
      if (padded != want)
        fail(f_, "tensor '" + name + "' has shape " + shape_str(t->ne) + ", expected " + shape_str(want) +
                     " (GGUF order: columns first; the last is the expert count)");
    }
    if (!can_dequantize(t->type))
      fail(f_,
           "tensor '" + name + "' has type " + ggml_type_name(uint32_t(t->type)) + ", which this engine cannot load");
    return *t;
  }
  const GgufTensorInfo& find(const std::string& name, uint64_t rows, uint64_t cols) {
    const GgufTensorInfo* t = f_.find_tensor(name);
    if (!t) fail(f_, "required tensor '" + name + "' is missing");
    used_.insert(name);
    std::vector<uint64_t> want = {cols};
    if (rows) want.push_back(rows);
    if (trimmed(t->ne) != trimmed(want))
      fail(f_, "tensor '" + name + "' has shape " + shape_str(t->ne) + ", expected " + shape_str(want) +
                   " (GGUF order: columns first)");
    if (!can_dequantize(t->type))
      fail(f_,
           "tensor '" + name + "' has type " + ggml_type_name(uint32_t(t->type)) +
               ", which this engine cannot load (supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, mxfp4, q4_K, "
               "q5_K, q6_K)");
    return *t;
  }
  GgufFile& f_;
  LoadedModel& m_;
  bool keep_mapping_ = false;
  std::set<std::string> used_;
};

// {arch}.rope.scaling.* as llama.cpp reads them (load_hparams: type default "linear", factor from
// rope.scaling.factor or the older rope.scale_linear; 0 or 1 = no scaling) into c.rope_scaling:
// linear and yarn (ggml's rope_yarn with ext_factor 1: original_context_length, beta_fast /
// beta_slow defaulting to 32 / 1; its mscale, times rope.scaling.attn_factor, squared into
// c.rope_attn_factor); longrope / unknown types are refused by name.
void read_rope_scaling(const GgufFile& f, const std::string& a, ModelConfig& c) {
  RopeScaling& s = c.rope_scaling;
  const std::string type = f.get_string(a + ".rope.scaling.type").value_or("linear");
  double factor = f.get_float(a + ".rope.scaling.factor").value_or(0.0);
  if (!f.find(a + ".rope.scaling.factor")) factor = f.get_float(a + ".rope.scale_linear").value_or(0.0);
  const double attn_factor = f.get_float(a + ".rope.scaling.attn_factor").value_or(1.0);
  if (attn_factor != 1.0 && type != "yarn")
    fail(f, "RoPE attention factor " + a + ".rope.scaling.attn_factor " + std::to_string(attn_factor) +
                " is not supported with RoPE scaling '" + type + "'");
  if (type == "none") return;
  if (type == "yarn" && (!std::isfinite(factor) || factor < 1.0))
    fail(f, "YaRN factor " + std::to_string(factor) + " (" + a + ".rope.scaling.factor) is below 1 (not supported)");
  if (type != "linear" && type != "yarn")
    fail(f, "RoPE scaling '" + type + "' (" + a +
                ".rope.scaling.type) is not supported (supported: none, linear, yarn, "
                "and Llama 3 frequency factors in rope_freqs.weight)");
  if (!std::isfinite(factor) || factor < 0) fail(f, "key '" + a + ".rope.scaling.factor' is " + std::to_string(factor));
  if (factor == 0.0 || factor == 1.0) {
    if (attn_factor != 1.0)
      fail(f, a + ".rope.scaling.attn_factor " + std::to_string(attn_factor) + " without a RoPE scaling factor");
    return;
  }
  s.factor = factor;
  if (type == "linear") {
    s.type = RopeScalingType::kLinear;
    return;
  }
  s.type = RopeScalingType::kYarn;
  s.original_max_position_embeddings = int(
      required_int(f, a + ".rope.scaling.original_context_length", 1, kMaxPositions));
  s.beta_fast = f.get_float(a + ".rope.scaling.yarn_beta_fast").value_or(32.0);
  s.beta_slow = f.get_float(a + ".rope.scaling.yarn_beta_slow").value_or(1.0);
  if (!(s.beta_fast > 0) || !(s.beta_slow > 0) || !std::isfinite(s.beta_fast) || !std::isfinite(s.beta_slow))
    fail(f, "YaRN beta_fast " + std::to_string(s.beta_fast) + " / beta_slow " + std::to_string(s.beta_slow) +
                " must be positive");
  if (f.get_float(a + ".rope.scaling.yarn_log_multiplier").value_or(0.0) != 0.0)
    fail(f, a + ".rope.scaling.yarn_log_multiplier (DeepSeek's YaRN variant) is not supported");
  // llama.cpp's other YaRN knobs: the ramp's weight (ext_factor; -1 = its default, 1 for YaRN)
  // and an mscale multiplier; only their defaults are computed here.
  if (const auto ext = f.get_float(a + ".rope.scaling.yarn_ext_factor"); ext && *ext != 1.0 && *ext != -1.0)
    fail(f, a + ".rope.scaling.yarn_ext_factor " + std::to_string(*ext) + " is not supported (only 1)");
  if (const auto am = f.get_float(a + ".rope.scaling.yarn_attn_factor"); am && *am != 1.0)
    fail(f, a + ".rope.scaling.yarn_attn_factor " + std::to_string(*am) + " is not supported (only 1)");
  if (!(attn_factor > 0.0) || attn_factor > 16.0 || !std::isfinite(attn_factor))
    fail(f, a + ".rope.scaling.attn_factor is " + std::to_string(attn_factor) + ", outside (0, 16]");
  // mscale multiplies cos and sin of q and k: every score by its square. Only exact when every
  // dim of every head rotates.
  if (c.rotary_dims() != c.head_dim)
    fail(f, "YaRN RoPE scaling with partial rotary (" + std::to_string(c.rotary_dims()) + " of " +
                std::to_string(c.head_dim) + " dims) is not supported");
  const double mscale = attn_factor * yarn_mscale(factor);
  c.rope_attn_factor = float(mscale * mscale);
}

// A fused [rows_a | rows_b | ...] matrix as views of its parts (each part's rows are contiguous).
void split(const WeightTensor& fused, uint64_t cols, std::initializer_list<WeightTensor*> parts,
           std::initializer_list<uint64_t> rows) {
  const std::size_t row_bytes = fused.bytes(cols);
  std::size_t offset = 0;
  auto r = rows.begin();
  for (WeightTensor* p : parts) {
    *p = WeightTensor(static_cast<const unsigned char*>(fused.data) + offset, fused.dtype);
    offset += row_bytes * *r++;
  }
}

// A Gated DeltaNet layer's tensors (create_qwen35_tensors' names and shapes).
void load_linear_attention(TensorLoader& t, const ModelConfig& c, const std::string& p, GatedDeltaNetWeights& w) {
  const LinearAttentionConfig& la = c.linear_attn;
  const uint64_t dim = c.hidden_size, conv = la.conv_dim(), value = la.value_dim(), nv = la.num_v_heads;
  w.in_proj_qkv = t.matrix(p + "attn_qkv.weight", conv, dim);
  w.in_proj_z = t.matrix(p + "attn_gate.weight", value, dim);
  w.in_proj_b = t.matrix(p + "ssm_beta.weight", nv, dim);
  w.in_proj_a = t.matrix(p + "ssm_alpha.weight", nv, dim);
  w.conv1d = t.get(p + "ssm_conv1d.weight", conv, uint64_t(la.conv_kernel));
  w.dt_bias = t.get(p + "ssm_dt.bias", 0, nv);
  w.a = t.get(p + "ssm_a", 0, nv);
  w.norm = t.get(p + "ssm_norm.weight", 0, uint64_t(la.head_v_dim));
  w.out_proj = t.matrix(p + "ssm_out.weight", dim, value);
}

// An attention layer's biases and q/k norms (layer `l`'s shape; -1: the model's). A layer that
// reads another layer's KV has no k/v biases or k norm.
void load_attention_extras(TensorLoader& t, const ModelFamily& fam, const ModelConfig& c, const std::string& p,
                           LayerWeights& lw, int l = -1) {
  const uint64_t hd = l >= 0 ? c.layer_head_dim(l) : c.head_dim, dim = c.hidden_size, q = uint64_t(c.n_heads) * hd,
                 kv = uint64_t(l >= 0 ? c.layer_kv_heads(l) : c.n_kv_heads) * hd;
  lw.o_proj = t.matrix(p + "attn_output.weight", dim, q);
  if (l >= 0 && c.layer(l).shares_kv()) {
    if (fam.qkv_bias != TensorRule::kNever) lw.bq = t.get_optional(p + "attn_q.bias", 0, q);
    if (fam.qk_norm) lw.q_norm = t.get(p + "attn_q_norm.weight", 0, hd);
  } else if (fam.qkv_bias == TensorRule::kRequired) {
    lw.bq = t.get(p + "attn_q.bias", 0, q);
    lw.bk = t.get(p + "attn_k.bias", 0, kv);
    lw.bv = t.get(p + "attn_v.bias", 0, kv);
  } else if (fam.qkv_bias == TensorRule::kOptional) {
    lw.bq = t.get_optional(p + "attn_q.bias", 0, q);
    lw.bk = t.get_optional(p + "attn_k.bias", 0, kv);
    lw.bv = t.get_optional(p + "attn_v.bias", 0, kv);
  }
  if (fam.out_bias != TensorRule::kNever) lw.bo = t.get_optional(p + "attn_output.bias", 0, dim);
  if (fam.qk_norm && !(l >= 0 && c.layer(l).shares_kv())) {
    lw.q_norm = t.get(p + "attn_q_norm.weight", 0, hd);
    lw.k_norm = t.get(p + "attn_k_norm.weight", 0, hd);
  }
  if (c.attention_sinks) lw.sinks = t.get(p + "attn_sinks.weight", 0, uint64_t(c.n_heads));
}

// The dense gated MLP or the experts (and shared expert) of a layer.
void load_feed_forward(TensorLoader& t, const ModelFamily& fam, const ModelConfig& c, const std::string& p, bool moe,
                       LayerWeights& lw, int l = -1) {
  const uint64_t dim = c.hidden_size, hidden = l >= 0 ? c.layer_intermediate_size(l) : c.intermediate_size;
  if (moe) {
    const uint64_t E = c.moe.num_experts, ef = c.moe.expert_intermediate_size;
    lw.moe.router = t.matrix(p + "ffn_gate_inp.weight", E, dim);
    // [E][rows][cols] 3-D tensors: expert e's matrix is the e-th slice.
    auto experts = [&](const std::string& name, uint64_t rows, uint64_t cols, std::vector<WeightTensor>& out) {
      const WeightTensor all = t.matrix3(name, E, rows, cols);
      const std::size_t bytes = all.bytes(rows * cols);
      for (uint64_t e = 0; e < E; ++e)
        out.emplace_back(static_cast<const unsigned char*>(all.data) + e * bytes, all.dtype);
    };
    if (t.has(p + "ffn_gate_up_exps.weight")) {
      std::vector<WeightTensor> fused;
      experts(p + "ffn_gate_up_exps.weight", 2 * ef, dim, fused);
      for (const WeightTensor& e : fused) {
        lw.moe.gate.emplace_back(e);
        lw.moe.up.emplace_back(static_cast<const unsigned char*>(e.data) + e.bytes(dim) * ef, e.dtype);
      }
    } else {
      experts(p + "ffn_gate_exps.weight", ef, dim, lw.moe.gate);
      experts(p + "ffn_up_exps.weight", ef, dim, lw.moe.up);
    }
    experts(p + "ffn_down_exps.weight", dim, ef, lw.moe.down);
    if (c.moe.biases) {
      // [E][rows] float32 biases: expert e's is row e.
      auto rows_of = [&](const float* all, uint64_t width, uint64_t at, std::vector<const float*>& out) {
        for (uint64_t e = 0; e < E; ++e) out.push_back(all + e * width + at);
      };
      auto bias_rows = [&](const std::string& name, uint64_t width, std::vector<const float*>& out) {
        rows_of(t.get(name, E, width), width, 0, out);
      };
      lw.moe.router_bias = t.get(p + "ffn_gate_inp.bias", 0, E);
      if (t.has(p + "ffn_gate_up_exps.bias")) {
        const float* gu = t.get(p + "ffn_gate_up_exps.bias", E, 2 * ef);
        rows_of(gu, 2 * ef, 0, lw.moe.gate_bias);
        rows_of(gu, 2 * ef, ef, lw.moe.up_bias);
      } else {
        bias_rows(p + "ffn_gate_exps.bias", ef, lw.moe.gate_bias);
        bias_rows(p + "ffn_up_exps.bias", ef, lw.moe.up_bias);
      }
      bias_rows(p + "ffn_down_exps.bias", dim, lw.moe.down_bias);
    }
    if (c.moe.parallel_dense) {
      // Gemma 4: the dense MLP beside the experts, the router's input scale, per-expert output
      // scales and the extra norms (create_gemma4_tensors).
      lw.gate_proj = t.matrix(p + "ffn_gate.weight", hidden, dim);
      lw.up_proj = t.matrix(p + "ffn_up.weight", hidden, dim);
      lw.down_proj = t.matrix(p + "ffn_down.weight", dim, hidden);
      lw.moe.router_scale = t.get(p + "ffn_gate_inp.scale", 0, dim);
      lw.moe.expert_scale = t.get_optional(p + "ffn_down_exps.scale", 0, E);
      lw.moe.pre_norm_2 = t.get(p + "pre_ffw_norm_2.weight", 0, dim);
      lw.moe.post_norm_1 = t.get(p + "post_ffw_norm_1.weight", 0, dim);
      lw.moe.post_norm_2 = t.get(p + "post_ffw_norm_2.weight", 0, dim);
    }
    if (const uint64_t sf = c.moe.shared_expert_intermediate_size; sf > 0) {
      lw.moe.shared_gate = t.matrix(p + "ffn_gate_shexp.weight", sf, dim);
      lw.moe.shared_up = t.matrix(p + "ffn_up_shexp.weight", sf, dim);
      lw.moe.shared_down = t.matrix(p + "ffn_down_shexp.weight", dim, sf);
      if (c.moe.shared_expert_gated) lw.moe.shared_gate_inp = t.get(p + "ffn_gate_inp_shexp.weight", 0, dim);
    }
  } else if (fam.fused_gate_up && !t.has(p + "ffn_gate.weight")) {
    split(t.matrix(p + "ffn_up.weight", 2 * hidden, dim), dim, {&lw.gate_proj, &lw.up_proj}, {hidden, hidden});
    lw.down_proj = t.matrix(p + "ffn_down.weight", dim, hidden);
  } else {
    lw.gate_proj = t.matrix(p + "ffn_gate.weight", hidden, dim);
    lw.down_proj = t.matrix(p + "ffn_down.weight", dim, hidden);
    lw.up_proj = t.matrix(p + "ffn_up.weight", hidden, dim);
  }
}

// One MTP block (ik_llama.cpp create_qwen35_tensors for the last nextn_predict_layers blocks):
// an attention layer (its attn_q may be absent: shared with the main model's last attention
// layer), its FFN (absent in some checkpoints), and the nextn.* norms and projection. Every
// required tensor missing is refused by name.
MtpWeights load_mtp_block(TensorLoader& t, const ModelFamily& fam, const ModelConfig& c, const std::string& p) {
  const uint64_t dim = c.hidden_size, q = uint64_t(c.n_heads) * c.head_dim, kv = uint64_t(c.n_kv_heads) * c.head_dim;
  MtpWeights m;
  LayerWeights& lw = m.layer;
  lw.attn_norm = t.get(p + "attn_norm.weight", 0, dim);
  if (t.has(p + "attn_q.weight")) lw.q_proj = t.matrix(p + "attn_q.weight", c.attn_output_gate ? 2 * q : q, dim);
  lw.k_proj = t.matrix(p + "attn_k.weight", kv, dim);
  lw.v_proj = t.matrix(p + "attn_v.weight", kv, dim);
  load_attention_extras(t, fam, c, p, lw);
  lw.ffn_norm = t.get(p + std::string(fam.ffn_norm_name) + ".weight", 0, dim);
  const bool has_ffn = c.moe.enabled() ? t.has(p + "ffn_gate_inp.weight") : t.has(p + "ffn_gate.weight");
  if (has_ffn) load_feed_forward(t, fam, c, p, c.moe.enabled(), lw);
  if (t.has(p + "nextn.eh_proj.weight")) m.eh_proj = t.matrix(p + "nextn.eh_proj.weight", dim, 2 * dim);
  m.enorm = t.get(p + "nextn.enorm.weight", 0, dim);
  m.hnorm = t.get(p + "nextn.hnorm.weight", 0, dim);
  m.shared_head_norm = t.get_optional(p + "nextn.shared_head_norm.weight", 0, dim);
  return m;
}

// The checks and tensors after the layers: attn_output.bias in all layers or none, the final
// norm, the classifier; refuses tensors nothing used.
void finish_gguf_model(const GgufFile& f, TensorLoader& t, ModelConfig& c, ModelWeights& w, const std::string& a) {
  const uint64_t dim = c.hidden_size, vocab = c.vocab_size;
  // Biases are per layer in the file but one switch here: a layer without them adds zeros, and
  // attn_output.bias must be in every attention layer or in none.
  int with_bo = 0, attention_layers = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    with_bo += w.layers[std::size_t(l)].bo != nullptr;
    attention_layers += !c.layer(l).is_recurrent();
  }
  if (with_bo != 0 && with_bo != attention_layers)
    fail(f, "attn_output.bias is in " + std::to_string(with_bo) + " of " + std::to_string(attention_layers) +
                " attention layers (must be all or none)");
  c.attention_out_bias = with_bo > 0;
  w.final_norm = t.get("output_norm.weight", 0, dim);
  c.shared_classifier = !t.has("output.weight");
  w.lm_head = c.shared_classifier ? w.token_embedding : t.matrix("output.weight", vocab, dim);
  t.finish(a);
}

}  // namespace

LoadedModel load_gguf_model(GgufFile& f) {
  const std::optional<std::string> arch_name = f.get_string("general.architecture");
  if (!arch_name) fail(f, "required key 'general.architecture' is missing");
  const ModelFamily* fam = find_family_by_gguf_name(*arch_name);
  if (!fam)
    fail(f, "architecture '" + *arch_name + "' is not supported (supported: " + supported_gguf_architectures() + ")");
  const std::string a(fam->gguf_name);
  if (!fam->moe && f.get_int(a + ".expert_count").value_or(0) > 0)
    fail(f, "mixture-of-experts models (" + a + ".expert_count " + std::to_string(*f.get_int(a + ".expert_count")) +
                ") are not supported for architecture '" + a + "'");
  if (!fam->gguf_hparams && f.find(a + ".attention.sliding_window"))
    fail(f, "sliding-window attention (" + a + ".attention.sliding_window) is not part of architecture '" + a + "'");

  LoadedModel m;
  ModelConfig& c = m.config;
  c.architecture = a;
  c.hidden_size = int(required_int(f, a + ".embedding_length", 1, kMaxDim));
  c.n_layers = int(required_int(f, a + ".block_count", 1, kMaxLayers));
  c.n_heads = int(required_int(f, a + ".attention.head_count", 1, kMaxHeads));
  // A per-layer array (Gemma 4) gives its largest entry here; the family's hook sets each layer's.
  auto int_or_largest = [&](const std::string& key, int64_t lo, int64_t hi) {
    const GgufValue* v = f.find(key);
    if (!v || !v->is_array()) return required_int(f, key, lo, hi);
    if (!fam->per_layer_shapes) fail(f, "per-layer '" + key + "' is not supported for architecture '" + a + "'");
    const std::optional<std::vector<int64_t>> each = GgufKeys{f, ""}.get_per_layer(key, c.n_layers);
    int64_t largest = lo;
    for (int64_t x : *each) {
      if (x < lo || x > hi)
        fail(f, "key '" + key + "' has an entry " + std::to_string(x) + ", outside [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
      largest = std::max(largest, x);
    }
    return largest;
  };
  c.intermediate_size = fam->moe && !f.find(a + ".feed_forward_length")
                            ? 0
                            : int(int_or_largest(a + ".feed_forward_length", 1, 4 * kMaxDim));
  c.n_kv_heads = f.find(a + ".attention.head_count_kv")
                     ? int(int_or_largest(a + ".attention.head_count_kv", 1, c.n_heads))
                     : c.n_heads;
  c.max_seq_len = int(required_int(f, a + ".context_length", 1, kMaxPositions));
  c.max_seq_len_is_soft = true;  // converters write guesses (stories260K.gguf says 128, trained 512)
  if (c.n_heads % c.n_kv_heads != 0)
    fail(f, "head_count " + std::to_string(c.n_heads) + " is not a multiple of head_count_kv " +
                std::to_string(c.n_kv_heads));
  // Head size: attention.key_length (llama.cpp n_embd_head_k; Qwen3 writes it from head_dim), else
  // embedding_length / head_count.
  if (f.find(a + ".attention.key_length")) {
    c.head_dim = int(required_int(f, a + ".attention.key_length", 1, kMaxDim));
  } else {
    if (c.hidden_size % c.n_heads != 0)
      fail(f, "embedding_length " + std::to_string(c.hidden_size) + " is not a multiple of head_count " +
                  std::to_string(c.n_heads) + " (and no " + a + ".attention.key_length is given)");
    c.head_dim = c.hidden_size / c.n_heads;
  }
  if (const auto vl = f.get_int(a + ".attention.value_length"); vl && *vl != c.head_dim)
    fail(f, a + ".attention.value_length " + std::to_string(*vl) + " differs from the key head size " +
                std::to_string(c.head_dim) + " (not supported)");
  if (c.head_dim % 2 != 0) fail(f, "head size " + std::to_string(c.head_dim) + " is odd (RoPE needs pairs)");
  // Partial rotary (Phi-4-mini): the leading rope.dimension_count dims of each head rotate.
  if (const auto rd = f.get_int(a + ".rope.dimension_count"); rd && *rd != c.head_dim) {
    if (*rd < 2 || *rd > c.head_dim || *rd % 2 != 0)
      fail(f, a + ".rope.dimension_count is " + std::to_string(*rd) +
                  ", not an even number of dims up to the head size " + std::to_string(c.head_dim));
    c.rotary_dim = int(*rd);
  }
  c.rope_theta = float(f.get_float(a + ".rope.freq_base").value_or(10000.0));
  c.norm_eps = float(f.get_float(a + ".attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rope_theta > 0.0f) || !std::isfinite(c.rope_theta))
    fail(f, a + ".rope.freq_base is " + std::to_string(c.rope_theta) + ", not a positive RoPE base");
  if (!(c.norm_eps > 0.0f) || c.norm_eps > 1.0f)
    fail(f, a + ".attention.layer_norm_rms_epsilon is " + std::to_string(c.norm_eps) + ", outside (0, 1]");
  c.rope_style = fam->rope_style;
  if (fam->longrope) {
    // LongRoPE: the factors are tensors (below); the attention factor scales q and k (cos/sin).
    if (const auto af = f.get_float(a + ".rope.scaling.attn_factor")) {
      if (!(*af > 0.0) || *af > 16.0 || !std::isfinite(*af))
        fail(f, a + ".rope.scaling.attn_factor is " + std::to_string(*af) + ", outside (0, 16]");
      c.rope_attn_factor = float(*af * *af);
    }
    const std::string type = f.get_string(a + ".rope.scaling.type").value_or("none");
    if (type != "none" && type != "longrope" && type != "su")
      fail(f, "RoPE scaling '" + type + "' (" + a + ".rope.scaling.type) is not supported for " + a);
  } else {
    read_rope_scaling(f, a, c);
  }
  c.qk_norm = fam->qk_norm;
  c.pre_norm = fam->pre_norm;
  c.post_norm = fam->post_norm;
  c.activation = fam->activation;
  c.stop_on_bos = false;  // as llama.cpp: only end-of-generation tokens stop
  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  if (!emb) fail(f, "required tensor 'token_embd.weight' is missing");
  if (emb->ne.size() < 2 || emb->ne[1] < 1 || emb->ne[1] > uint64_t(kMaxVocab))
    fail(f, "tensor 'token_embd.weight' has shape " + shape_str(emb->ne) + ", expected [" +
                std::to_string(c.hidden_size) + ", vocab]");
  c.vocab_size = int(emb->ne[1]);
  if (const auto vs = f.get_int(a + ".vocab_size"); vs && *vs != c.vocab_size)
    fail(f, a + ".vocab_size " + std::to_string(*vs) + " differs from token_embd.weight's " +
                std::to_string(c.vocab_size) + " rows");
  if (fam->gguf_hparams) fam->gguf_hparams(GgufKeys{f, a + "."}, c);
  if (c.moe.enabled() && c.moe.num_experts_per_tok > c.moe.num_experts)
    fail(f, "top-k " + std::to_string(c.moe.num_experts_per_tok) + " exceeds the expert count " +
                std::to_string(c.moe.num_experts));

  // BOS/EOS as the file gives them, inside the model's vocabulary (the embedding's rows): an id
  // beyond it would index past the logits. Absent: llama.cpp's defaults 1 and 2 where they exist;
  // negative or 0xFFFFFFFF: none.
  for (const auto& [key, field, fallback] : {std::tuple{"tokenizer.ggml.bos_token_id", &ModelConfig::bos_id, 1},
                                             std::tuple{"tokenizer.ggml.eos_token_id", &ModelConfig::eos_id, 2}}) {
    const std::optional<int64_t> given = f.get_int(key);
    if (!given) {
      c.*field = fallback < c.vocab_size ? fallback : -1;
    } else if (*given < 0 || *given == 0xFFFFFFFFll) {
      c.*field = -1;
    } else if (*given >= c.vocab_size) {
      fail(f, std::string(key) + " is " + std::to_string(*given) + ", outside the model's vocabulary of " +
                  std::to_string(c.vocab_size) + " tokens");
    } else {
      c.*field = int(*given);
    }
  }

  TensorLoader t(f, m);
  const uint64_t dim = c.hidden_size, q = uint64_t(c.n_heads) * c.head_dim, kv = uint64_t(c.n_kv_heads) * c.head_dim,
                 vocab = c.vocab_size, half_rot = uint64_t(c.rotary_dims()) / 2;
  ModelWeights& w = m.weights;
  w.token_embedding = t.matrix("token_embd.weight", vocab, dim);
  // Per-pair frequency divisors (Llama 3.1's rope_freqs; Phi-3's LongRoPE short factors, the long
  // ones kept for contexts past the original one).
  auto read_factors = [&](const std::string& name) {
    const float* ff = t.get(name, 0, half_rot);
    std::vector<float> v(ff, ff + half_rot);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!(v[i] > 0.0f) || !std::isfinite(v[i]))
        fail(f, "tensor '" + name + "' element " + std::to_string(i) + " is " + std::to_string(v[i]) +
                    ", not a positive frequency divisor");
    return v;
  };
  if (fam->rope_freqs && t.has("rope_freqs.weight")) c.rope_freq_factors = read_factors("rope_freqs.weight");
  if (fam->longrope && (t.has("rope_factors_short.weight") || t.has("rope_factors_long.weight"))) {
    c.rope_freq_factors = read_factors("rope_factors_short.weight");
    c.rope_freq_factors_long = read_factors("rope_factors_long.weight");
    c.rope_long_threshold = int(f.get_int(a + ".rope.scaling.original_context_length").value_or(c.max_seq_len));
  }
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    const LayerSpec spec = c.layer(l);
    if (fam->pre_norm) lw.attn_norm = t.get(p + "attn_norm.weight", 0, dim);
    if (spec.is_recurrent()) {
      load_linear_attention(t, c, p, lw.linear_attn);
    } else if (fam->fused_qkv && t.has(p + "attn_qkv.weight")) {
      split(t.matrix(p + "attn_qkv.weight", q + 2 * kv, dim), dim, {&lw.q_proj, &lw.k_proj, &lw.v_proj}, {q, kv, kv});
    } else {
      // With an output gate, attn_q holds [q_h | gate_h] per head. Layer shapes may differ (Gemma 4).
      const uint64_t hd = c.layer_head_dim(l), lq = uint64_t(c.n_heads) * hd, lkv = uint64_t(c.layer_kv_heads(l)) * hd;
      lw.q_proj = t.matrix(p + "attn_q.weight", c.attn_output_gate ? 2 * lq : lq, dim);
      if (!spec.shares_kv()) {
        lw.k_proj = t.matrix(p + "attn_k.weight", lkv, dim);
        const bool own_v = fam->v_proj == TensorRule::kRequired || t.has(p + "attn_v.weight");
        lw.v_proj = own_v ? t.matrix(p + "attn_v.weight", lkv, dim) : lw.k_proj;
        if (!own_v && std::size_t(l) < c.layer_specs.size()) c.layer_specs[std::size_t(l)].k_eq_v = true;
      }
    }
    if (!spec.is_recurrent()) load_attention_extras(t, *fam, c, p, lw, l);
    if (fam->layer_output_scale != TensorRule::kNever) {
      lw.output_scale = fam->layer_output_scale == TensorRule::kRequired
                            ? t.get(p + "layer_output_scale.weight", 0, 1)
                            : t.get_optional(p + "layer_output_scale.weight", 0, 1);
      if (lw.output_scale && !std::isfinite(*lw.output_scale))
        fail(f, "tensor '" + p + "layer_output_scale.weight' is " + std::to_string(*lw.output_scale) + ", not finite");
    }
    if (c.per_layer_input_size > 0) {
      const uint64_t pl = uint64_t(c.per_layer_input_size);
      lw.per_layer_gate = t.matrix(p + "inp_gate.weight", pl, dim);
      lw.per_layer_proj = t.matrix(p + "proj.weight", dim, pl);
      lw.per_layer_post_norm = t.get(p + "post_norm.weight", 0, dim);
    }
    if (fam->post_norm) {
      lw.post_attention_norm = t.get(p + "post_attention_norm.weight", 0, dim);
      lw.post_ffw_norm = t.get(p + "post_ffw_norm.weight", 0, dim);
    }
    if (fam->pre_norm) lw.ffn_norm = t.get(p + std::string(fam->ffn_norm_name) + ".weight", 0, dim);
    load_feed_forward(t, *fam, c, p, spec.moe, lw, l);
    if (lw.bq || lw.bk || lw.bv) c.attention_qkv_bias = true;
  }
  if (c.per_layer_input_size > 0) {
    const uint64_t width = uint64_t(c.n_layers) * uint64_t(c.per_layer_input_size);
    w.per_layer_token_embedding = t.matrix("per_layer_token_embd.weight", vocab, width);
    w.per_layer_model_proj = t.matrix("per_layer_model_proj.weight", width, dim);
    w.per_layer_proj_norm = t.get("per_layer_proj_norm.weight", 0, uint64_t(c.per_layer_input_size));
  }
  for (int i = 0; i < c.nextn_predict_layers; ++i)
    w.mtp.push_back(load_mtp_block(t, *fam, c, "blk." + std::to_string(c.n_layers + i) + "."));
  finish_gguf_model(f, t, c, w, a);
  return m;
}

GgufModel load_gguf(const std::string& path, bool with_tokenizer) {
  GgufFile f = GgufFile::open(path);
  GgufModel g;
  if (with_tokenizer) {
    g.tokenizer = load_gguf_tokenizer(f);
    g.add_bos = g.tokenizer->add_bos();  // add_bos_token, else llama.cpp's default for the vocabulary
  }
  g.chat_template = read_gguf_chat_template(f);
  g.model = load_gguf_model(f);
  return g;
}

}  // namespace pagedchat
