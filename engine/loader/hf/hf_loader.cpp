#include "engine/loader/hf/hf_loader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <tuple>

#include "engine/loader/chat_template_source.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/loader/load_util.h"
#include "engine/model/arch/registry.h"

namespace fs = std::filesystem;

namespace pagedchat {
namespace {

using load::shape_str;

// The folder's tokenizer: an explicit one, else tokenizer.json (with tokenizer_config.json), else
// tokenizer.model (sentencepiece), as transformers prefers the fast tokenizer.
std::string find_tokenizer(const fs::path& dir, const std::string& explicit_path) {
  std::error_code ec;
  if (!explicit_path.empty()) {
    if (!fs::exists(explicit_path, ec)) throw std::runtime_error("tokenizer '" + explicit_path + "' does not exist");
    return explicit_path;
  }
  for (const char* name : {"tokenizer.json", "tokenizer.model"})
    if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
  throw std::runtime_error("no tokenizer.json or tokenizer.model in '" + dir.string() + "'; pass one with --tokenizer");
}

// gpt-oss's experts as the release ships them (transformers integrations/mxfp4.py): per matrix
// `<name>_blocks` U8 [E, rows, k/32, 16] (32 FP4 E2M1 values per block, byte j holding value 2j in
// its low nibble and 2j + 1 in its high one) and `<name>_scales` U8 [E, rows, k/32] (E8M0), rows
// being the output features; gate_up_proj interleaves its rows (2j: gate j, 2j + 1: up j) and so
// does its bias [E, 2I]. Rewritten into GGUF's MXFP4 blocks ({e, qs[16]}, qs[j] = value j | value
// j + 16 << 4; llama.cpp's conversion/gpt_oss.py does the same) in pack sources, released once
// packed. The bfloat16 ("dequantized") form, [E, in, out], is refused by name.
template <typename Take, typename Matrix>
void load_gpt_oss_experts(const SafetensorsSet& st, std::set<std::string>& used, LoadedModel& m, const std::string& p,
                          const ModelConfig& c, MoeWeights& moe, Take& take, Matrix& matrix) {
  const uint64_t E = c.moe.num_experts, ef = c.moe.expert_intermediate_size, dim = c.hidden_size;
  auto tensor = [&](const std::string& name, std::vector<uint64_t> shape, StDtype dtype) -> const StTensor& {
    const StTensor* t = st.find(name);
    if (!t) {
      if (st.find(p + "mlp.experts.gate_up_proj") || st.find(p + "mlp.experts.down_proj"))
        throw std::runtime_error("'" + st.source() + "' holds gpt-oss's experts in " +
                                 "bfloat16 (mlp.experts.gate_up_proj); only the MXFP4 release (*_blocks, *_scales) " +
                                 "is supported: use it or its GGUF file");
      throw std::runtime_error("tensor '" + name + "' is missing from '" + st.source() + "'");
    }
    used.insert(name);
    if (t->shape != shape || t->dtype != dtype)
      throw std::runtime_error("tensor '" + name + "' in '" + t->file + "' is " + dtype_name(t->dtype) + " " +
                               shape_str(t->shape) + ", expected " + dtype_name(dtype) + " " + shape_str(shape));
    return *t;
  };
  moe.router = matrix(p + "mlp.router.weight", std::vector<uint64_t>{E, dim});
  moe.router_bias = take(p + "mlp.router.bias", std::vector<uint64_t>{E});
  // Rows [row0, row0 + rows * step) of `step` of each expert's [E, all_rows, k/32] MXFP4 matrix,
  // every step-th row, as GGUF MXFP4 [rows, k] per expert.
  auto repack = [&](const std::string& name, uint64_t all_rows, uint64_t k, uint64_t row0, uint64_t step,
                    std::vector<WeightTensor>& out) {
    if (k % 32 != 0)
      throw std::runtime_error("'" + name + "': a row of " + std::to_string(k) + " is not whole MXFP4 blocks");
    const uint64_t nb = k / 32, rows = all_rows / step;
    const StTensor& blocks = tensor(name + "_blocks", {E, all_rows, nb, 16}, StDtype::kU8);
    const StTensor& scales = tensor(name + "_scales", {E, all_rows, nb}, StDtype::kU8);
    unsigned char* dst = m.allocate_pack_source(E * rows * nb * 17);
    for (uint64_t e = 0; e < E; ++e) {
      out.emplace_back(dst + e * rows * nb * 17, kernels::DType::kMXFP4);
      for (uint64_t r = 0; r < rows; ++r) {
        const uint64_t src_row = e * all_rows + row0 + r * step;
        const uint8_t* b = blocks.data + src_row * nb * 16;
        const uint8_t* sc = scales.data + src_row * nb;
        unsigned char* d = dst + (e * rows + r) * nb * 17;
        for (uint64_t i = 0; i < nb; ++i, b += 16, d += 17) {
          d[0] = sc[i];
          auto value = [b](int n) { return n % 2 == 0 ? b[n / 2] & 15 : b[n / 2] >> 4; };
          for (int j = 0; j < 16; ++j) d[1 + j] = static_cast<unsigned char>(value(j) | value(j + 16) << 4);
        }
      }
    }
  };
  const std::string x = p + "mlp.experts.";
  repack(x + "gate_up_proj", 2 * ef, dim, 0, 2, moe.gate);
  repack(x + "gate_up_proj", 2 * ef, dim, 1, 2, moe.up);
  repack(x + "down_proj", dim, ef, 0, 1, moe.down);
  // Biases: gate_up_proj_bias [E, 2I] interleaved, down_proj_bias [E, H].
  const float* gu = take(x + "gate_up_proj_bias", std::vector<uint64_t>{E, 2 * ef});
  float* gate_bias = m.allocate(E * ef);
  float* up_bias = m.allocate(E * ef);
  for (uint64_t e = 0; e < E; ++e) {
    for (uint64_t j = 0; j < ef; ++j) {
      gate_bias[e * ef + j] = gu[e * 2 * ef + 2 * j];
      up_bias[e * ef + j] = gu[e * 2 * ef + 2 * j + 1];
    }
    moe.gate_bias.push_back(gate_bias + e * ef);
    moe.up_bias.push_back(up_bias + e * ef);
  }
  const float* down_bias = take(x + "down_proj_bias", std::vector<uint64_t>{E, dim});
  for (uint64_t e = 0; e < E; ++e) moe.down_bias.push_back(down_bias + e * dim);
}

}  // namespace

std::string hf_folder_of(const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  auto is_hf = [&](const fs::path& d) {
    for (const char* f : {"config.json", "model.safetensors", "model.safetensors.index.json"})
      if (fs::is_regular_file(d / f, ec)) return true;
    return false;
  };
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return is_hf(p) ? path : std::string();
  if (!fs::is_regular_file(p, ec)) return {};
  const std::string name = p.filename().string();
  const bool hf_file = name == "config.json" || name == "model.safetensors.index.json" ||
                       (name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  return hf_file && is_hf(dir) ? dir.string() : std::string();
}

LoadedModel load_hf_weights(const std::string& dir, const HfModelConfig& cfg) {
  SafetensorsSet st = SafetensorsSet::open_folder(dir);
  const std::string config_name = (fs::path(dir) / "config.json").string();
  LoadedModel m;
  m.config = cfg.config;
  ModelConfig& c = m.config;

  std::set<std::string> used;
  bool in_place = false;
  auto find = [&](const std::string& name, const std::vector<uint64_t>& shape) -> const StTensor& {
    const StTensor* t = st.find(name);
    if (!t)
      throw std::runtime_error("tensor '" + name + "' is missing from '" + st.source() + "' (a " + cfg.architecture +
                               " with this '" + config_name + "' has it)");
    used.insert(name);
    if (t->shape != shape)
      throw std::runtime_error("tensor '" + name + "' in '" + t->file + "' has shape " + shape_str(t->shape) +
                               ", but '" + config_name + "' implies " + shape_str(shape));
    if (!supported(t->dtype))
      throw std::runtime_error("tensor '" + name + "' in '" + t->file + "' has dtype " + dtype_name(t->dtype) +
                               "; only F32, F16 and BF16 are supported");
    return *t;
  };
  // Vectors (norms, biases) as float32: in place when F32 and aligned, else converted.
  auto take = [&](const std::string& name, std::vector<uint64_t> shape) -> const float* {
    const StTensor* t = &find(name, shape);
    if (t->dtype == StDtype::kF32 && reinterpret_cast<uintptr_t>(t->data) % alignof(float) == 0) {
      in_place = true;
      return reinterpret_cast<const float*>(t->data);
    }
    float* buf = m.allocate(t->num_elements);
    to_float32(*t, buf);
    return buf;
  };

  // Matrices in their stored type, in place in the mapped shards (the model packs them).
  auto matrix = [&](const std::string& name, std::vector<uint64_t> shape) -> WeightTensor {
    const StTensor& t = find(name, shape);
    in_place = true;
    const kernels::DType dt = t.dtype == StDtype::kF32   ? kernels::DType::kF32
                              : t.dtype == StDtype::kF16 ? kernels::DType::kF16
                                                         : kernels::DType::kBF16;
    return {t.data, dt};
  };

  // Norm weights: Gemma's are stored as w for (1 + w); the engine holds the multiplier.
  auto norm = [&](const std::string& name, uint64_t n) -> const float* {
    if (cfg.norm_weight_offset == 0.0f) return take(name, {n});
    const StTensor& t = find(name, {n});
    float* buf = m.allocate(t.num_elements);
    to_float32(t, buf);
    for (std::size_t i = 0; i < t.num_elements; ++i) buf[i] += cfg.norm_weight_offset;
    return buf;
  };
  // The rows [first, first + n) of a fused matrix, as a view.
  auto rows_of = [](const WeightTensor& fused, uint64_t cols, uint64_t first) {
    return WeightTensor(static_cast<const unsigned char*>(fused.data) + fused.bytes(cols) * first, fused.dtype);
  };

  // Where the text model's tensors are: model.* (…ForCausalLM), or under language_model in a
  // Gemma3ForConditionalGeneration folder (language_model.model.* as Google ships it,
  // model.language_model.* as transformers >= 4.52 saves it).
  std::string prefix = "model.", head = "lm_head.weight";
  if (cfg.multimodal) {
    if (st.find("language_model.model.embed_tokens.weight")) {
      prefix = "language_model.model.";
      head = "language_model.lm_head.weight";
    } else if (st.find("model.language_model.embed_tokens.weight")) {
      prefix = "model.language_model.";
    } else {
      throw std::runtime_error("'" + st.source() + "' has neither 'language_model.model.embed_tokens.weight' nor " +
                               "'model.language_model.embed_tokens.weight': no text model of a " + cfg.architecture);
    }
  }
  const ModelFamily* fam = find_family_by_gguf_name(c.architecture);
  const bool fused_qkv = fam && fam->fused_qkv, fused_gate_up = fam && fam->fused_gate_up;

  const uint64_t dim = c.hidden_size, hidden = c.intermediate_size, vocab = c.vocab_size;
  // Qwen3.5's Gated DeltaNet (modeling_qwen3_5.py Qwen3_5GatedDeltaNet), its value heads in the
  // checkpoint's grouped order (the config sets LinearAttentionConfig::v_heads_grouped): in_proj_qkv
  // [q | k | v], in_proj_z, in_proj_b, in_proj_a, conv1d [channels, 1, taps], dt_bias, A_log (the
  // decay rate is -exp(A_log)), the gated RMSNorm's weight (a plain multiplier), out_proj.
  auto load_gated_delta_net = [&](const std::string& x, GatedDeltaNetWeights& g) {
    const LinearAttentionConfig& la = c.linear_attn;
    const uint64_t conv = uint64_t(la.conv_dim()), value = uint64_t(la.value_dim()), nv = uint64_t(la.num_v_heads);
    g.in_proj_qkv = matrix(x + "in_proj_qkv.weight", {conv, dim});
    g.in_proj_z = matrix(x + "in_proj_z.weight", {value, dim});
    g.in_proj_b = matrix(x + "in_proj_b.weight", {nv, dim});
    g.in_proj_a = matrix(x + "in_proj_a.weight", {nv, dim});
    g.conv1d = take(x + "conv1d.weight", {conv, 1, uint64_t(la.conv_kernel)});
    g.dt_bias = take(x + "dt_bias", {nv});
    const float* a_log = take(x + "A_log", {nv});
    float* a = m.allocate(nv);
    for (uint64_t i = 0; i < nv; ++i) {
      a[i] = -std::exp(a_log[i]);
      if (!std::isfinite(a[i]))
        throw std::runtime_error("tensor '" + x + "A_log' holds " + std::to_string(a_log[i]) + " at " +
                                 std::to_string(i) + ": the decay rate -exp(A_log) is not a finite number");
    }
    g.a = a;
    g.norm = take(x + "norm.weight", {uint64_t(la.head_v_dim)});
    g.out_proj = matrix(x + "out_proj.weight", {dim, value});
  };
  const uint64_t q = uint64_t(c.n_heads) * c.head_dim, kv = uint64_t(c.n_kv_heads) * c.head_dim;
  ModelWeights& w = m.weights;
  w.token_embedding = matrix(prefix + "embed_tokens.weight", {vocab, dim});
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = prefix + "layers." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    const LayerSpec spec = c.layer(l);
    // This layer's shapes (Gemma 4's local and global layers differ).
    const uint64_t lhd = c.layer_head_dim(l), lq = uint64_t(c.n_heads) * lhd, lkv = uint64_t(c.layer_kv_heads(l)) * lhd,
                   lhidden = c.layer_intermediate_size(l);
    if (c.pre_norm) lw.attn_norm = norm(p + "input_layernorm.weight", dim);
    if (spec.mixer == LayerMixer::kGatedDeltaNet) {
      load_gated_delta_net(p + "linear_attn.", lw.linear_attn);
    } else if (fused_qkv) {
      // Phi-3's qkv_proj: the q rows, then k, then v.
      const WeightTensor qkv = matrix(p + "self_attn.qkv_proj.weight", {q + 2 * kv, dim});
      lw.q_proj = qkv;
      lw.k_proj = rows_of(qkv, dim, q);
      lw.v_proj = rows_of(qkv, dim, q + kv);
    } else if (spec.shares_kv()) {
      // Gemma 4's KV-shared layers project only q; k/v weights a checkpoint still carries for them
      // are never read (transformers ignores them too).
      lw.q_proj = matrix(p + "self_attn.q_proj.weight", {lq, dim});
      for (const char* unused : {"self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.k_norm.weight"})
        if (st.find(p + unused)) used.insert(p + unused);
    } else {
      // Qwen3.5's gated attention: per head, its query rows then its output gate's.
      lw.q_proj = matrix(p + "self_attn.q_proj.weight", {c.attn_output_gate ? 2 * lq : lq, dim});
      lw.k_proj = matrix(p + "self_attn.k_proj.weight", {lkv, dim});
      // Gemma 4's global layers with attention_k_eq_v have no v_proj: V is the K projection.
      lw.v_proj = spec.k_eq_v ? lw.k_proj : matrix(p + "self_attn.v_proj.weight", {lkv, dim});
    }
    if (spec.mixer != LayerMixer::kGatedDeltaNet) {
      lw.o_proj = matrix(p + "self_attn.o_proj.weight", {dim, lq});
      if (c.attention_qkv_bias) {
        lw.bq = take(p + "self_attn.q_proj.bias", {lq});
        lw.bk = take(p + "self_attn.k_proj.bias", {lkv});
        lw.bv = take(p + "self_attn.v_proj.bias", {lkv});
      }
      if (c.attention_out_bias) lw.bo = take(p + "self_attn.o_proj.bias", {dim});
      if (c.attention_sinks) lw.sinks = take(p + "self_attn.sinks", {uint64_t(c.n_heads)});  // gpt-oss
      if (c.qk_norm) {
        lw.q_norm = norm(p + "self_attn.q_norm.weight", lhd);
        if (!spec.shares_kv()) lw.k_norm = norm(p + "self_attn.k_norm.weight", lhd);
      }
    }
    if (fam && fam->layer_output_scale != TensorRule::kNever) {
      // Gemma 4's layer_scalar (a [1] buffer without ".weight"): the residual stream times it.
      // Every Gemma 4 checkpoint has it: a missing one is refused, not taken as 1.
      const std::string name = p + "layer_scalar";
      lw.output_scale = take(name, {1});
      if (!std::isfinite(*lw.output_scale))
        throw std::runtime_error("tensor '" + name + "' is " + std::to_string(*lw.output_scale) + ", not finite");
    }
    if (c.per_layer_input_size > 0) {
      const uint64_t pl = uint64_t(c.per_layer_input_size);
      lw.per_layer_gate = matrix(p + "per_layer_input_gate.weight", {pl, dim});
      lw.per_layer_proj = matrix(p + "per_layer_projection.weight", {dim, pl});
      lw.per_layer_post_norm = norm(p + "post_per_layer_input_norm.weight", dim);
    }
    if (c.pre_norm && !c.post_norm) {
      lw.ffn_norm = norm(p + "post_attention_layernorm.weight", dim);  // Llama's name for the pre-MLP norm
    } else if (c.post_norm) {
      // EXAONE 4 (and Gemma's sandwich): post_attention_layernorm is the norm of the attention's
      // output, post_feedforward_layernorm the MLP's.
      lw.post_attention_norm = norm(p + "post_attention_layernorm.weight", dim);
      lw.post_ffw_norm = norm(p + "post_feedforward_layernorm.weight", dim);
      if (c.pre_norm) lw.ffn_norm = norm(p + "pre_feedforward_layernorm.weight", dim);
    }
    if (spec.moe && c.moe.parallel_dense) {
      // Gemma 4 26B-A4B: the dense MLP (pre_feedforward_layernorm, post_feedforward_layernorm_1)
      // beside the experts (pre_feedforward_layernorm_2, post_feedforward_layernorm_2); the router
      // reads rms(x) * router.scale; experts.gate_up_proj [E, 2I, H] holds each expert's gate rows
      // then its up rows, experts.down_proj [E, H, I].
      const uint64_t E = c.moe.num_experts, ef = c.moe.expert_intermediate_size;
      lw.gate_proj = matrix(p + "mlp.gate_proj.weight", {lhidden, dim});
      lw.up_proj = matrix(p + "mlp.up_proj.weight", {lhidden, dim});
      lw.down_proj = matrix(p + "mlp.down_proj.weight", {dim, lhidden});
      lw.moe.router = matrix(p + "router.proj.weight", {E, dim});
      lw.moe.router_scale = take(p + "router.scale", {dim});
      lw.moe.expert_scale = take(p + "router.per_expert_scale", {E});
      for (const auto& [name, v, n] : {std::tuple{"router.scale", lw.moe.router_scale, dim},
                                       std::tuple{"router.per_expert_scale", lw.moe.expert_scale, E}})
        for (uint64_t i = 0; i < n; ++i)
          if (!std::isfinite(v[i]))
            throw std::runtime_error("tensor '" + p + name + "' holds " + std::to_string(v[i]) + " at " +
                                     std::to_string(i) + ", not a finite number");
      lw.moe.pre_norm_2 = norm(p + "pre_feedforward_layernorm_2.weight", dim);
      lw.moe.post_norm_1 = norm(p + "post_feedforward_layernorm_1.weight", dim);
      lw.moe.post_norm_2 = norm(p + "post_feedforward_layernorm_2.weight", dim);
      const WeightTensor gu = matrix(p + "experts.gate_up_proj", {E, 2 * ef, dim});
      const WeightTensor down = matrix(p + "experts.down_proj", {E, dim, ef});
      for (uint64_t e = 0; e < E; ++e) {
        lw.moe.gate.push_back(rows_of(gu, dim, e * 2 * ef));
        lw.moe.up.push_back(rows_of(gu, dim, e * 2 * ef + ef));
        lw.moe.down.push_back(rows_of(down, ef, e * dim));
      }
    } else if (spec.moe && c.moe.biases) {
      load_gpt_oss_experts(st, used, m, p, c, lw.moe, take, matrix);
    } else if (spec.moe) {
      // Qwen3-MoE and Qwen3.5-MoE: router mlp.gate [experts, hidden], expert e's
      // mlp.experts.e.{gate,up,down}_proj, or (transformers 5) mlp.experts.gate_up_proj [E, 2I, H]
      // (each expert's gate rows, then its up rows) and mlp.experts.down_proj [E, H, I].
      const uint64_t E = c.moe.num_experts, ef = c.moe.expert_intermediate_size;
      const std::string router = p + "mlp.gate.weight";
      if (const StTensor* r = st.find(router); r && r->shape.size() == 2 && r->shape[1] == dim && r->shape[0] != E)
        throw std::runtime_error("tensor '" + router + "' in '" + r->file + "' routes to " +
                                 std::to_string(r->shape[0]) + " experts, but '" + config_name + "' says " +
                                 std::to_string(E) + " (num_experts): the expert count does not match the router");
      lw.moe.router = matrix(router, {E, dim});
      const std::string fused = p + "mlp.experts.gate_up_proj", fused_w = fused + ".weight";
      if (st.find(fused) || st.find(fused_w)) {
        const std::string down = p + "mlp.experts.down_proj" + (st.find(fused) ? "" : ".weight");
        const WeightTensor gu = matrix(st.find(fused) ? fused : fused_w, {E, 2 * ef, dim});
        const WeightTensor dn = matrix(down, {E, dim, ef});
        for (uint64_t e = 0; e < E; ++e) {
          lw.moe.gate.push_back(rows_of(gu, dim, e * 2 * ef));
          lw.moe.up.push_back(rows_of(gu, dim, e * 2 * ef + ef));
          lw.moe.down.push_back(rows_of(dn, ef, e * dim));
        }
      } else {
        for (uint64_t e = 0; e < E; ++e) {
          const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
          lw.moe.gate.push_back(matrix(x + "gate_proj.weight", {ef, dim}));
          lw.moe.up.push_back(matrix(x + "up_proj.weight", {ef, dim}));
          lw.moe.down.push_back(matrix(x + "down_proj.weight", {dim, ef}));
        }
      }
      if (const uint64_t sf = uint64_t(c.moe.shared_expert_intermediate_size); sf > 0) {
        // Qwen3.5-MoE's shared expert, gated per token by sigmoid(shared_expert_gate · x).
        const std::string x = p + "mlp.shared_expert.";
        lw.moe.shared_gate = matrix(x + "gate_proj.weight", {sf, dim});
        lw.moe.shared_up = matrix(x + "up_proj.weight", {sf, dim});
        lw.moe.shared_down = matrix(x + "down_proj.weight", {dim, sf});
        if (c.moe.shared_expert_gated) lw.moe.shared_gate_inp = take(p + "mlp.shared_expert_gate.weight", {1, dim});
      }
      if (const std::string more = p + "mlp.experts." + std::to_string(E) + ".gate_proj.weight"; st.find(more))
        throw std::runtime_error("tensor '" + more + "' is an expert beyond the " + std::to_string(E) + " that '" +
                                 config_name + "' declares (num_experts)");
    } else if (fused_gate_up) {
      // Phi-3's gate_up_proj: the gate rows, then the up rows (Phi3MLP's chunk(2)).
      const WeightTensor gu = matrix(p + "mlp.gate_up_proj.weight", {2 * hidden, dim});
      lw.gate_proj = gu;
      lw.up_proj = rows_of(gu, dim, hidden);
      lw.down_proj = matrix(p + "mlp.down_proj.weight", {dim, hidden});
    } else {
      lw.gate_proj = matrix(p + "mlp.gate_proj.weight", {lhidden, dim});
      lw.up_proj = matrix(p + "mlp.up_proj.weight", {lhidden, dim});
      lw.down_proj = matrix(p + "mlp.down_proj.weight", {dim, lhidden});
    }
  }
  if (c.per_layer_input_size > 0) {
    // Gemma 4's per-layer embeddings: row t holds each layer's per_layer_input_size slice in turn.
    const uint64_t width = uint64_t(c.n_layers) * uint64_t(c.per_layer_input_size);
    w.per_layer_token_embedding = matrix(prefix + "embed_tokens_per_layer.weight", {vocab, width});
    w.per_layer_model_proj = matrix(prefix + "per_layer_model_projection.weight", {width, dim});
    w.per_layer_proj_norm = norm(prefix + "per_layer_projection_norm.weight", uint64_t(c.per_layer_input_size));
  }
  w.final_norm = norm(prefix + "norm.weight", dim);
  if (c.shared_classifier) {
    w.lm_head = w.token_embedding;  // transformers ties lm_head to the embedding; a stored copy is ignored (as vLLM)
    if (st.find(head)) used.insert(head);
  } else {
    if (!st.find(head))
      throw std::runtime_error("tensor '" + head + "' is missing from '" + st.source() + "' and '" + config_name +
                               "' says tie_word_embeddings false: the classifier would be unknown");
    w.lm_head = matrix(head, {vocab, dim});
  }
  // A floating-point tensor left over would be ignored weights: refuse it by name (a bias the
  // config does not declare, an MoE expert, a vision tower), except RoPE's inv_freq buffers older
  // checkpoints store. Integer and bool tensors are buffers (position_ids, masks), not weights.
  auto is_float = [](StDtype d) {
    return d == StDtype::kF16 || d == StDtype::kBF16 || d == StDtype::kF32 || d == StDtype::kF64 ||
           d == StDtype::kF8E4M3 || d == StDtype::kF8E5M2;
  };
  for (const auto& [name, t] : st.tensors()) {
    if (used.count(name) || !is_float(t.dtype)) continue;
    if (name.ends_with(".rotary_emb.inv_freq")) continue;
    // Qwen3.5's multi-token-prediction block: not loaded from a folder (transformers skips it too).
    if (fam && fam->mtp && name.starts_with("mtp.")) continue;
    // The image side (engine/vision/hf_vision.h reads it): Gemma3ForConditionalGeneration's
    // tower and projector, Gemma4ForConditionalGeneration's tower, embedder (and audio tower, not
    // run), Qwen3VLForConditionalGeneration's visual.
    if (cfg.multimodal &&
        (name.starts_with("vision_tower.") || name.starts_with("multi_modal_projector.") ||
         name.starts_with("model.vision_tower.") || name.starts_with("model.multi_modal_projector.") ||
         name.starts_with("model.embed_vision.") || name.starts_with("model.audio_tower.") ||
         name.starts_with("model.embed_audio.") || name.starts_with("model.visual.") || name.starts_with("visual.")))
      continue;
    const bool bias = name.ends_with(".bias");
    throw std::runtime_error("tensor '" + name + "' in '" + t.file + "' is not part of a " + cfg.architecture +
                             " as '" + config_name + "' describes it" +
                             (bias ? " (a bias term: the config declares none there)" : " (unknown tensor)"));
  }
  if (in_place) m.files = st.release_files();  // else every weight was copied: let the mappings go
  return m;
}

ModelBundle load_hf_folder(const std::string& dir, const std::string& tokenizer) {
  const fs::path d(dir);
  std::error_code ec;
  const std::string config_path = (d / "config.json").string();
  if (!fs::is_regular_file(config_path, ec))
    throw std::runtime_error("'" + dir + "' has no config.json: a Hugging Face folder needs one beside its weights");
  const HfModelConfig cfg = parse_hf_config(read_text_file(config_path), config_path);

  HfTokenizerConfig tc;
  if (fs::is_regular_file(d / "tokenizer_config.json", ec)) {
    const std::string p = (d / "tokenizer_config.json").string();
    tc = parse_tokenizer_config(read_text_file(p), p);
  }
  HfGenerationConfig gc;
  if (fs::is_regular_file(d / "generation_config.json", ec)) {
    const std::string p = (d / "generation_config.json").string();
    gc = parse_generation_config(read_text_file(p), p);
  }
  const std::string tokenizer_path = find_tokenizer(d, tokenizer);

  ModelBundle b;
  b.format = "huggingface";
  b.path = dir;
  b.model = load_hf_weights(dir, cfg);
  b.tokenizer = load_tokenizer(tokenizer_path);
  b.chat_template = hf_folder_chat_template(dir, tc);
  b.generation_defaults = gc.defaults;

  ModelConfig& mc = b.model.config;
  // tokenizer_config.json's add_bos_token, else the tokenizer's own default (tokenizer.json's
  // post-processor; sentencepiece models: true).
  mc.add_bos = tc.add_bos_token ? *tc.add_bos_token : b.tokenizer->add_bos();
  if (!cfg.has_bos_id) {
    if (gc.bos_id)
      mc.bos_id = *gc.bos_id;
    else if (b.tokenizer->bos_id() >= 0)
      mc.bos_id = b.tokenizer->bos_id();
  }
  if (!cfg.has_eos_id) {
    if (!gc.eos_ids.empty())
      mc.eos_id = gc.eos_ids.front();
    else if (b.tokenizer->eos_id() >= 0)
      mc.eos_id = b.tokenizer->eos_id();
  }
  for (int id : gc.eos_ids) {
    if (id >= mc.vocab_size)
      throw std::runtime_error("'" + (d / "generation_config.json").string() + "': eos_token_id " + std::to_string(id) +
                               " is not below vocab_size " + std::to_string(mc.vocab_size));
    if (id != mc.eos_id && std::find(mc.extra_eos_ids.begin(), mc.extra_eos_ids.end(), id) == mc.extra_eos_ids.end())
      mc.extra_eos_ids.push_back(id);
  }
  return b;
}

}  // namespace pagedchat
