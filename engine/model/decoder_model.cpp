#include "engine/model/decoder_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "engine/model/layers/gated_mlp.h"
#include "engine/model/layers/moe_mlp.h"
#include "engine/model/rope_frequencies.h"

namespace pagedchat {

namespace {

// Throws when the weights and the config's options disagree.
void check_weights(const ModelConfig& c, const ModelWeights& w) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("model weights do not fit the config: " + what);
  };
  if (int(w.layers.size()) != c.n_layers)
    fail(std::to_string(w.layers.size()) + " layers, config says " + std::to_string(c.n_layers));
  if (!c.layer_specs.empty() && int(c.layer_specs.size()) != c.n_layers)
    fail(std::to_string(c.layer_specs.size()) + " layer specs for " + std::to_string(c.n_layers) + " layers");
  if (!w.token_embedding || !w.final_norm || !w.lm_head) fail("token embedding, final norm or classifier missing");
  if (!c.pre_norm && !c.post_norm) fail("neither pre- nor post-norm blocks");
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    const LayerSpec spec = c.layer(l);
    const std::string at = "layer " + std::to_string(l) + ": ";
    if (spec.is_recurrent()) {
      const GatedDeltaNetWeights& la = lw.linear_attn;
      if (!c.linear_attn.enabled()) fail(at + "a Gated DeltaNet layer but the config has no linear-attention shape");
      if (!la.in_proj_qkv || !la.in_proj_z || !la.in_proj_b || !la.in_proj_a || !la.out_proj || !la.conv1d ||
          !la.dt_bias || !la.a || !la.norm)
        fail(at + "a Gated DeltaNet tensor is missing");
      if (lw.q_proj || lw.k_proj || lw.v_proj || lw.o_proj)
        fail(at + "attention weights given on a Gated DeltaNet layer");
    } else if (spec.shares_kv()) {
      if (!lw.q_proj || !lw.o_proj) fail(at + "q_proj or o_proj missing");
      if (lw.k_proj || lw.v_proj || lw.k_norm || lw.bk || lw.bv)
        fail(at + "K/V weights given on a layer that reads layer " + std::to_string(spec.kv_source_layer) + "'s KV");
    } else {
      for (const auto& [p, name] : {std::pair<bool, const char*>{bool(lw.q_proj), "q_proj"},
                                    {bool(lw.k_proj), "k_proj"},
                                    {bool(lw.v_proj), "v_proj"},
                                    {bool(lw.o_proj), "o_proj"}})
        if (!p) fail(at + name + " missing");
    }
    if ((c.per_layer_input_size > 0) != bool(lw.per_layer_gate) ||
        (c.per_layer_input_size > 0) != bool(lw.per_layer_proj) ||
        (c.per_layer_input_size > 0) != (lw.per_layer_post_norm != nullptr))
      fail(at + (c.per_layer_input_size > 0 ? "per-layer embedding weights missing"
                                            : "per-layer embedding weights given but the config has none"));
    for (const auto& [p, on, name] :
         {std::tuple<bool, bool, const char*>{lw.attn_norm != nullptr, c.pre_norm, "attention norm"},
          {lw.ffn_norm != nullptr, c.pre_norm && spec.ffn, "ffn norm"},
          {lw.post_attention_norm != nullptr, c.post_norm, "post-attention norm"},
          {lw.post_ffw_norm != nullptr, c.post_norm, "post-ffw norm"}})
      if (p != on) fail(at + name + (on ? " missing" : " given but the config's norm placement has none"));
    if (spec.moe) {
      if (!c.moe.enabled()) fail(at + "a mixture-of-experts layer but the config has no experts");
      if (!lw.moe.router) fail(at + "router (ffn_gate_inp) missing");
      for (const auto* v : {&lw.moe.gate, &lw.moe.up, &lw.moe.down}) {
        if (int(v->size()) != c.moe.num_experts)
          fail(at + std::to_string(v->size()) + " experts given, the router has " + std::to_string(c.moe.num_experts));
        for (const WeightTensor& e : *v)
          if (!e) fail(at + "an expert's weights are missing");
      }
      if (c.moe.parallel_dense) {
        if (!lw.gate_proj || !lw.up_proj || !lw.down_proj || !lw.moe.router_scale || !lw.moe.pre_norm_2 ||
            !lw.moe.post_norm_1 || !lw.moe.post_norm_2 || !c.post_norm)
          fail(at + "the dense MLP, router scale or norms beside the experts are missing");
      } else if (lw.gate_proj || lw.up_proj || lw.down_proj) {
        fail(at + "dense MLP weights given on a mixture-of-experts layer");
      }
      if (c.moe.biases) {
        const std::size_t E = std::size_t(c.moe.num_experts);
        if (!lw.moe.router_bias || lw.moe.gate_bias.size() != E || lw.moe.up_bias.size() != E ||
            lw.moe.down_bias.size() != E)
          fail(at + "the router's or the experts' biases are missing");
        for (const auto* v : {&lw.moe.gate_bias, &lw.moe.up_bias, &lw.moe.down_bias})
          for (const float* b : *v)
            if (!b) fail(at + "an expert's bias is missing");
      } else if (lw.moe.router_bias || !lw.moe.gate_bias.empty()) {
        fail(at + "expert biases given but the config has none");
      }
      if (c.moe.shared_expert_intermediate_size > 0 &&
          (!lw.moe.shared_gate || !lw.moe.shared_up || !lw.moe.shared_down ||
           (c.moe.shared_expert_gated && !lw.moe.shared_gate_inp)))
        fail(at + "the shared expert's weights are missing");
    } else if (!spec.ffn) {
      if (lw.gate_proj || lw.up_proj || lw.down_proj || lw.moe.router || c.post_norm)
        fail(at + "feed-forward weights or post-norms given on a layer without a feed-forward");
    } else {
      for (const auto& [p, name] : {std::pair<bool, const char*>{bool(lw.gate_proj), "gate_proj"},
                                    {bool(lw.down_proj), "down_proj"},
                                    {bool(lw.up_proj), "up_proj"}})
        if (!p) fail(at + name + " missing");
      if (lw.moe.router) fail(at + "experts given on a dense layer");
    }
    if (!c.attention_qkv_bias && (lw.bq || lw.bk || lw.bv))
      fail(at + "q/k/v biases given but attention_qkv_bias is off");
    if (c.attention_out_bias != (lw.bo != nullptr))
      fail(at + (c.attention_out_bias ? "attention_out_bias is on but bo is missing"
                                      : "bo given but attention_out_bias is off"));
    if (!spec.is_recurrent() &&
        (c.qk_norm != (lw.q_norm != nullptr) || (!spec.shares_kv() && c.qk_norm != (lw.k_norm != nullptr))))
      fail(at +
           (c.qk_norm ? "qk_norm is on but q_norm or k_norm is missing" : "q_norm/k_norm given but qk_norm is off"));
    if (spec.sliding_window < 0) fail(at + "negative sliding window");
    if (spec.moe && !spec.ffn) fail(at + "a mixture-of-experts layer without a feed-forward");
    if (!spec.is_recurrent() && c.attention_sinks != (lw.sinks != nullptr))
      fail(at + (c.attention_sinks ? "attention sinks are on but missing" : "sinks given but attention_sinks is off"));
  }
  bool scaled_layers = false;
  for (const LayerWeights& lw : w.layers) scaled_layers |= lw.output_scale != nullptr;
  if ((c.per_layer_input_size > 0 || scaled_layers) && !c.post_norm)
    fail("per-layer embeddings and layer output scales need the post-norm block placement (Gemma 4)");
  if (c.per_layer_input_size > 0 && (!w.per_layer_token_embedding || !w.per_layer_model_proj || !w.per_layer_proj_norm))
    fail("per-layer embedding table, projection or norm missing");
  if (c.per_layer_input_size == 0 && (w.per_layer_token_embedding || w.per_layer_model_proj))
    fail("per-layer embeddings given but the config has none");
  if (c.per_layer_input_size > 0 && (c.per_layer_embed_pad_id < 0 || c.per_layer_embed_pad_id >= c.vocab_size))
    fail("the padding token " + std::to_string(c.per_layer_embed_pad_id) + " (the per-layer row of image positions) " +
         "is outside the vocabulary of " + std::to_string(c.vocab_size));
  if (c.moe.enabled() && (c.moe.num_experts_per_tok < 1 || c.moe.num_experts_per_tok > c.moe.num_experts))
    fail("top-k of " + std::to_string(c.moe.num_experts_per_tok) + " experts out of " +
         std::to_string(c.moe.num_experts));
}

}  // namespace

std::vector<kernels::OpFeature> model_op_features(const ModelConfig& c) {
  std::vector<kernels::OpFeature> f;
  bool window = false, nope = false, moe = false, delta_net = c.attn_output_gate;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerSpec s = c.layer(l);
    window |= s.sliding_window > 0;
    nope |= !s.use_rope;
    moe |= s.moe;
    delta_net |= s.is_recurrent();
  }
  if (delta_net) f.push_back(kernels::OpFeature::kGatedDeltaNet);
  if (window) f.push_back(kernels::OpFeature::kSlidingWindow);
  if (nope) f.push_back(kernels::OpFeature::kNoRope);
  if (moe) f.push_back(kernels::OpFeature::kMixtureOfExperts);
  bool partial = false, mixed = false;
  for (int l = 0; l < c.n_layers; ++l) {
    if (c.layer(l).is_recurrent()) continue;
    partial |= c.layer_rotary_dim(l) != c.layer_head_dim(l);
    mixed |= c.layer_kv_heads(l) * c.layer_head_dim(l) != c.kv_cache_width();
  }
  if (partial || c.rotary_dims() != c.head_dim) f.push_back(kernels::OpFeature::kPartialRotary);
  if (mixed) f.push_back(kernels::OpFeature::kMixedHeadSizes);
  if (c.attention_scale != 0.0f || c.rope_attn_factor != 1.0f) f.push_back(kernels::OpFeature::kAttentionScale);
  if (c.final_logit_softcap > 0.0f) f.push_back(kernels::OpFeature::kLogitSoftcap);
  if (c.activation == MlpActivation::kGeluTanh) f.push_back(kernels::OpFeature::kGeluTanh);
  if (c.activation == MlpActivation::kSwigluOai) f.push_back(kernels::OpFeature::kSwigluOai);
  if (c.attention_sinks) f.push_back(kernels::OpFeature::kAttentionSinks);
  if (c.embedding_scale != 1.0f) f.push_back(kernels::OpFeature::kScale);
  if (c.per_layer_input_size > 0) f.push_back(kernels::OpFeature::kGeluTanh);
  return f;
}

DecoderModel::DecoderModel(const ModelConfig& config, const ModelWeights& weights, kernels::Backend& backend,
                           WeightDType dtype, const PackedCallback& packed, const MtpInput& mtp)
    : config_(config), weights_(weights), ops_(backend), weight_dtype_(dtype) {
  check_weights(config, weights);
  if (bool(mtp.block) != bool(mtp.target))
    throw std::invalid_argument("an MTP head needs both its block and its target model");
  if (mtp.target && (&mtp.target->ops_ != &backend || mtp.target->config_.hidden_size != config.hidden_size ||
                     mtp.target->config_.vocab_size != config.vocab_size))
    throw std::invalid_argument("an MTP head must share its target's backend, hidden size and vocabulary");
  if (mtp.block && (!mtp.block->eh_proj || !mtp.block->enorm || !mtp.block->hnorm))
    throw std::invalid_argument("the MTP block has no nextn.eh_proj, enorm or hnorm");
  for (kernels::OpFeature f : model_op_features(config))
    if (!ops_.supports(f))
      throw std::invalid_argument(std::string("the ") + ops_.name() + " backend has no kernel for " +
                                  kernels::op_feature_name(f) + " yet, which this model needs");
  try {
    inv_freq_ = pagedchat::rope_inv_freq(config);
    for (int l = 0; l < config.n_layers; ++l) {
      const LayerSpec s = config.layer(l);
      const RopeKey key{s.rope_theta, s.rope_scaled, config.layer_rotary_dim(l)};
      if (s.use_rope && !s.is_recurrent() && !inv_freq_by_theta_.count(key)) {
        // Kept alive here: on the CPU, place() hands back the host memory itself.
        const std::vector<double>& f = inv_freq_tables_.emplace_back(pagedchat::rope_inv_freq(
            config, s.rope_theta, s.rope_scaled, config.layer_rotary_dim(l), config.layer_head_dim(l)));
        inv_freq_by_theta_[key] = place(f.data(), f.size());
      }
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("model config: ") + e.what());
  }
  const int dim = config.hidden_size, kv_row = config.kv_cache_width();
  layers::WeightPacker packer(ops_, dtype, packed);
  for (int l = 0; l < config.n_layers; ++l) {
    const LayerWeights& lw = weights.layers[std::size_t(l)];
    const std::string at = "layer " + std::to_string(l) + ": ";
    PackedLayer p;
    p.spec = config.layer(l);
    const int hd = config.layer_head_dim(l), kv_heads = config.layer_kv_heads(l);
    const float base_scale = config.attention_scale > 0.0f ? config.attention_scale : 1.0f / std::sqrt(float(hd));
    layers::AttentionOptions ao;
    ao.hidden_size = dim;
    ao.n_heads = config.n_heads;
    ao.n_kv_heads = kv_heads;
    ao.head_dim = hd;
    ao.rotary_dim = config.layer_rotary_dim(l);
    ao.neox = config.rope_style == RopeStyle::kNeox;
    ao.inv_freq = p.spec.use_rope && !p.spec.is_recurrent()
                      ? inv_freq_by_theta_.at({p.spec.rope_theta, p.spec.rope_scaled, ao.rotary_dim})
                      : nullptr;
    ao.qkv_bias = config.attention_qkv_bias;
    ao.norm_eps = config.norm_eps;
    // The RoPE attention factor (LongRoPE, YaRN's mscale) scales cos and sin: only rotated layers.
    ao.scale = p.spec.use_rope && p.spec.rope_scaled ? base_scale * config.rope_attn_factor : base_scale;
    ao.sliding_window = p.spec.sliding_window;
    ao.output_gate = config.attn_output_gate;
    ao.sinks = config.attention_sinks;
    ao.v_norm = config.v_norm;
    ao.kv_row_width = kv_heads * hd != kv_row ? kv_row : 0;
    ao.shared_kv = p.spec.shares_kv();
    ao.mrope_sections = config.mrope_sections;
    if (p.spec.is_recurrent())
      p.delta_net = std::make_unique<layers::GatedDeltaNet>(packer, lw.linear_attn, dim, config.linear_attn,
                                                            config.norm_eps, at);
    else
      p.attention = std::make_unique<layers::Attention>(packer, lw, ao, at);
    if (p.spec.moe) p.moe = std::make_unique<layers::MoeMlp>(packer, lw.moe, dim, config.moe, config.activation, at);
    if (p.spec.moe && config.moe.parallel_dense) {
      // Gemma 4: the dense MLP beside the experts, and the router's input norm weight
      // ffn_gate_inp.scale / sqrt(hidden) (ik_llama.cpp folds the factor in the same way).
      p.mlp = std::make_unique<layers::GatedMlp>(packer, lw.gate_proj, lw.up_proj, lw.down_proj, dim,
                                                 config.layer_intermediate_size(l), config.activation, at);
      // Kept alive here: on the CPU, place() hands back the host memory itself.
      std::vector<float>& router_norm = host_vectors_.emplace_back(lw.moe.router_scale, lw.moe.router_scale + dim);
      for (float& v : router_norm) v /= std::sqrt(float(dim));
      p.router_norm = place(router_norm.data(), router_norm.size());
      p.pre_norm_2 = place(lw.moe.pre_norm_2, dim);
      p.post_norm_1 = place(lw.moe.post_norm_1, dim);
      p.post_norm_2 = place(lw.moe.post_norm_2, dim);
    } else if (!p.spec.moe && p.spec.ffn) {
      p.mlp = std::make_unique<layers::GatedMlp>(packer, lw.gate_proj, lw.up_proj, lw.down_proj, dim,
                                                 config.layer_intermediate_size(l), config.activation, at);
    }
    p.attn_norm = place(lw.attn_norm, dim);
    p.ffn_norm = place(lw.ffn_norm, dim);
    p.post_attention_norm = place(lw.post_attention_norm, dim);
    p.post_ffw_norm = place(lw.post_ffw_norm, dim);
    if (const int pl = config.per_layer_input_size; pl > 0) {
      p.per_layer_gate = packer.pack({{lw.per_layer_gate, pl, "per-layer input gate"}}, dim, at);
      p.per_layer_proj = packer.pack({{lw.per_layer_proj, dim, "per-layer projection"}}, pl, at);
      p.per_layer_post_norm = place(lw.per_layer_post_norm, dim);
    }
    if (lw.output_scale) p.output_scale = *lw.output_scale;
    layers_.push_back(std::move(p));
  }
  if (const int pl = config.per_layer_input_size; pl > 0) {
    const int width = config.n_layers * pl;
    per_layer_model_proj_ = packer.pack({{weights.per_layer_model_proj, width, "per-layer model projection"}}, dim, "");
    per_layer_proj_norm_ = place(weights.per_layer_proj_norm, std::size_t(pl));
    const WeightTensor& table = weights.per_layer_token_embedding;
    if (width % kernels::dtype_block_elems(table.dtype) != 0)
      throw std::invalid_argument(std::string("per-layer token embedding is ") + kernels::dtype_name(table.dtype) +
                                  " with rows of " + std::to_string(width) + " values, not whole blocks");
    placed_.emplace_back();
    per_layer_embedding_ = ops_.place_embedding(table.data, table.dtype, config.vocab_size, width, placed_.back(),
                                                &per_layer_embedding_dtype_);
    // Read a row per token in place, as the token embedding (below).
    if (packed) packed(table.data, table.bytes(std::size_t(config.vocab_size) * width));
  }
  if (mtp.block) {
    pack_mtp_input(packer, *mtp.block);
    classifier_ref_ = mtp.target->classifier_ref_;
    final_norm_ = place(weights.final_norm, dim);
    embedding_ = mtp.target->embedding_;
    embedding_dtype_ = mtp.target->embedding_dtype_;
    packed_types_ = packer.type_summary();
    return;
  }
  classifier_ = packer.pack({{weights.lm_head, config.vocab_size, "classifier"}}, dim, "");
  classifier_ref_ = classifier_.get();
  if (dim % kernels::dtype_block_elems(weights.token_embedding.dtype) != 0)
    throw std::invalid_argument(std::string("token embedding is ") +
                                kernels::dtype_name(weights.token_embedding.dtype) + " with rows of " +
                                std::to_string(dim) + " values, not whole blocks");
  final_norm_ = place(weights.final_norm, dim);
  placed_.emplace_back();
  embedding_ = ops_.place_embedding(weights.token_embedding.data, weights.token_embedding.dtype, config.vocab_size, dim,
                                    placed_.back(), &embedding_dtype_);
  // On the CPU embedding() reads the table in place, a row per token: once its pages are dropped,
  // only the rows of tokens seen come back.
  if (packed) packed(weights.token_embedding.data, weights.token_embedding.bytes(std::size_t(config.vocab_size) * dim));
  packed_types_ = packer.type_summary();
}

void DecoderModel::pack_mtp_input(layers::WeightPacker& packer, const MtpWeights& m) {
  // eh_proj · [e | h] = E · e + Hm · h with E, Hm the halves of each row: packed apart, so the
  // forward needs no concatenation.
  const int dim = config_.hidden_size;
  const WeightTensor& w = m.eh_proj;
  if (dim % kernels::dtype_block_elems(w.dtype) != 0)
    throw std::invalid_argument(std::string("MTP block: nextn.eh_proj is ") + kernels::dtype_name(w.dtype) +
                                " with halves of " + std::to_string(dim) + " values, not whole blocks");
  const std::size_t half = w.bytes(std::size_t(dim));
  const auto* src = static_cast<const unsigned char*>(w.data);
  for (int part = 0; part < 2; ++part) {
    std::vector<unsigned char>& out = eh_halves_.emplace_back(half * std::size_t(dim));
    for (int r = 0; r < dim; ++r)
      std::copy_n(src + std::size_t(r) * 2 * half + std::size_t(part) * half, half, out.data() + std::size_t(r) * half);
  }
  const WeightTensor e(eh_halves_[0].data(), w.dtype), h(eh_halves_[1].data(), w.dtype);
  eh_embed_ = packer.pack({{e, dim, "nextn.eh_proj"}}, dim, "MTP block: ");
  eh_hidden_ = packer.pack({{h, dim, "nextn.eh_proj"}}, dim, "MTP block: ");
  enorm_ = place(m.enorm, std::size_t(dim));
  hnorm_ = place(m.hnorm, std::size_t(dim));
}

std::size_t DecoderModel::packed_bytes() const {
  std::size_t n = classifier_ ? classifier_->bytes : 0;
  if (eh_embed_) n += eh_embed_->bytes + eh_hidden_->bytes;
  for (const auto& l : layers_) {
    n += l.attention ? l.attention->packed_bytes() : l.delta_net->packed_bytes();
    n += (l.mlp ? l.mlp->packed_bytes() : 0) + (l.moe ? l.moe->packed_bytes() : 0);
    if (l.per_layer_gate) n += l.per_layer_gate->bytes + l.per_layer_proj->bytes;
  }
  if (per_layer_model_proj_) n += per_layer_model_proj_->bytes;
  return n;
}

template <typename T>
const T* DecoderModel::place(const T* host, std::size_t n) {
  if (!host) return nullptr;
  placed_.emplace_back();
  return static_cast<const T*>(ops_.place(host, n * sizeof(T), placed_.back()));
}

template <typename T>
T* DecoderModel::workspace(std::unique_ptr<kernels::Buffer>& buf, std::size_t n) {
  if (!buf || buf->bytes() < n * sizeof(T)) {
    buf.reset();  // free the smaller one first
    buf = ops_.allocate(n * sizeof(T));
  }
  return static_cast<T*>(buf->data());
}

template <typename T>
const T* DecoderModel::upload(std::unique_ptr<kernels::Buffer>& buf, const std::vector<T>& host) {
  T* p = workspace<T>(buf, std::max<std::size_t>(host.size(), 1));
  ops_.copy_to_backend(p, host.data(), host.size() * sizeof(T));
  return p;
}

void DecoderModel::feed_forward(PackedLayer& pl, float* y, const float* h, int T) {
  if (pl.moe)
    pl.moe->forward(ops_, ws_, y, h, T);
  else
    pl.mlp->forward(ops_, ws_, y, h, T);
}

void DecoderModel::dense_and_experts(PackedLayer& pl, float* y, const float* h, const float* x, int T) {
  const int dim = config_.hidden_size;
  const float eps = config_.norm_eps;
  const std::int64_t n = std::int64_t(T) * dim;
  float* expert_in = workspace<float>(expert_in_, std::size_t(n));
  float* router_in = workspace<float>(router_in_, std::size_t(n));
  float* experts = workspace<float>(expert_out_, std::size_t(n));
  pl.mlp->forward(ops_, ws_, y, h, T);
  ops_.rms_norm(y, y, pl.post_norm_1, T, dim, eps);
  ops_.rms_norm(expert_in, x, pl.pre_norm_2, T, dim, eps);
  ops_.rms_norm(router_in, x, pl.router_norm, T, dim, eps);
  pl.moe->forward(ops_, ws_, experts, expert_in, T, router_in);
  ops_.rms_norm(experts, experts, pl.post_norm_2, T, dim, eps);
  ops_.add(y, experts, n);
}

bool DecoderModel::forward(const ForwardBatch& b, KVCache& cache, std::vector<float>& logits,
                           const std::function<bool()>& abandon) {
  const ModelConfig& c = config_;
  const int T = b.num_tokens();
  const int dim = c.hidden_size;
  float* x = workspace<float>(x_, std::size_t(T) * dim);
  float* xb = workspace<float>(xb_, std::size_t(T) * dim);
  float* ffn = workspace<float>(ffn_, std::size_t(T) * dim);
  const int* ids = upload(ids_, b.input_ids);
  const int* positions = upload(positions_, b.positions);
  const int* mrope_positions = nullptr;
  if (!b.mrope_positions.empty()) {
    if (b.mrope_positions.size() != std::size_t(T) * 3 || c.mrope_sections[0] == 0)
      throw std::invalid_argument("the batch's M-RoPE positions do not match its tokens or the model");
    mrope_positions = upload(mrope_positions_, b.mrope_positions);
  }

  // Attention metadata per KV-cache group: the same requests and lengths, each group's own
  // block tables and slots (engine/core/kv_cache_coordinator.h).
  const int groups = cache.num_groups();
  if (int(b.extra_groups.size()) != groups - 1)
    throw std::invalid_argument("the batch has tables for " + std::to_string(b.extra_groups.size() + 1) +
                                " KV-cache groups, the cache has " + std::to_string(groups));
  kernels::AttentionMetadata meta;
  meta.query_start_loc = upload(query_start_, b.query_start_loc);
  meta.seq_lens = upload(seq_lens_, b.seq_lens);
  meta.num_requests = b.num_requests();
  meta.block_size = cache.block_size;
  meta.num_tokens = T;
  for (int r = 0; r < meta.num_requests; ++r) {
    meta.max_query_len = std::max(meta.max_query_len, b.query_start_loc[r + 1] - b.query_start_loc[r]);
    meta.max_seq_len = std::max(meta.max_seq_len, b.seq_lens[r]);
  }
  if (!b.key_ends.empty()) {
    if (int(b.key_ends.size()) != T) throw std::invalid_argument("the batch's key_ends do not match its tokens");
    meta.key_ends = upload(key_ends_, b.key_ends);
    if (!b.key_begins.empty()) {
      if (b.key_begins.size() != b.key_ends.size())
        throw std::invalid_argument("the batch's key_begins do not match its tokens");
      meta.key_begins = upload(key_begins_, b.key_begins);
    }
  }
  std::vector<kernels::AttentionMetadata> group_meta(std::size_t(groups), meta);
  std::vector<const int64_t*> group_slots(static_cast<std::size_t>(groups));
  if (group_slots_.size() < std::size_t(groups)) {
    group_slots_.resize(std::size_t(groups));
    group_tables_.resize(std::size_t(groups));
  }
  group_slots[0] = upload(slots_, b.slot_mapping);
  group_meta[0].block_tables = upload(block_tables_, b.block_tables);
  group_meta[0].max_blocks_per_seq = b.max_blocks_per_seq;
  for (int g = 1; g < groups; ++g) {
    const ForwardBatch::KVGroupTables& t = b.extra_groups[std::size_t(g) - 1];
    group_slots[g] = upload(group_slots_[g], t.slot_mapping);
    group_meta[g].block_tables = upload(group_tables_[g], t.block_tables);
    group_meta[g].max_blocks_per_seq = t.max_blocks_per_seq;
  }

  // Recurrent layers: the step's state copies first, then each request's slot and checkpoint.
  const bool recurrent = c.num_recurrent_layers() > 0;
  if (recurrent) {
    if (int(b.state_slots.size()) != b.num_requests())
      throw std::invalid_argument("the batch gives " + std::to_string(b.state_slots.size()) + " state slots for " +
                                  std::to_string(b.num_requests()) + " requests of a model with recurrent layers");
    for (const auto& [src, dst] : b.state_copies) {
      if (dst < 0 || dst >= cache.num_state_slots || src >= cache.num_state_slots)
        throw std::invalid_argument("state copy " + std::to_string(src) + " -> " + std::to_string(dst) +
                                    " outside the cache's " + std::to_string(cache.num_state_slots) + " slots");
      cache.copy_state(src, dst);
    }
    for (int slot : b.state_slots)
      if (slot < 0 || slot >= cache.num_state_slots)
        throw std::invalid_argument("state slot " + std::to_string(slot) + " outside the cache's " +
                                    std::to_string(cache.num_state_slots) + " slots");
  }
  delta_seqs_.resize(std::size_t(b.num_requests()));

  ops_.embedding(x, embedding_, embedding_dtype_, ids, T, dim);
  if (c.embedding_scale != 1.0f) ops_.scale(x, c.embedding_scale, std::int64_t(T) * dim);
  for (const ForwardBatch::EmbedRow& e : b.input_embeds) {
    if (e.token < 0 || e.token >= T || !e.row) throw std::invalid_argument("an input embedding outside the batch");
    ops_.copy_to_backend(x + std::int64_t(e.token) * dim, e.row, std::size_t(dim) * sizeof(float));
  }
  if (eh_embed_) {
    // An MTP head: x = E·(rms_norm(x)·enorm) + Hm·(rms_norm(h)·hnorm).
    if (b.input_hidden.size() != std::size_t(T) * dim)
      throw std::invalid_argument("an MTP head's batch needs a hidden state per token");
    float* h = const_cast<float*>(upload(input_hidden_, b.input_hidden));
    ops_.rms_norm(xb, x, enorm_, T, dim, c.norm_eps);
    ops_.rms_norm(h, h, hnorm_, T, dim, c.norm_eps);
    ops_.linear(x, xb, *eh_embed_, T);
    ops_.linear(xb, h, *eh_hidden_, T);
    ops_.add(x, xb, std::int64_t(T) * dim);
  }
  // Per-layer inputs [T, n_layers * P] (Gemma 4): (rms_norm(x·Wproj per layer, eps * hidden)·norm
  // + table[id] * sqrt(P)) / sqrt(2). The eps scaling is transformers' hidden_size^-0.5 on the
  // projection folded into the norm (ik_llama.cpp's build_gemma4 does the same). A position fed
  // an embedding (an image's) takes the row of per_layer_embed_pad_id, as transformers'
  // Gemma4Model does (ik_llama.cpp instead adds row 0 unscaled).
  const int pl_width = c.n_layers * c.per_layer_input_size;
  float* per_layer = nullptr;
  if (pl_width > 0) {
    const std::int64_t n = std::int64_t(T) * pl_width;
    per_layer = workspace<float>(per_layer_, std::size_t(n));
    float* rows = workspace<float>(per_layer_rows_, std::size_t(n));
    ops_.linear(per_layer, x, *per_layer_model_proj_, T);
    ops_.rms_norm_heads(per_layer, pl_width, per_layer_proj_norm_, T, c.n_layers, c.per_layer_input_size,
                        c.norm_eps * float(dim));
    const int* row_ids = ids;
    if (!b.input_embeds.empty()) {
      per_layer_ids_host_ = b.input_ids;
      for (const ForwardBatch::EmbedRow& e : b.input_embeds)
        per_layer_ids_host_[std::size_t(e.token)] = c.per_layer_embed_pad_id;
      row_ids = upload(per_layer_ids_, per_layer_ids_host_);
    }
    ops_.embedding(rows, per_layer_embedding_, per_layer_embedding_dtype_, row_ids, T, pl_width);
    ops_.scale(rows, std::sqrt(float(c.per_layer_input_size)), n);
    ops_.add(per_layer, rows, n);
    ops_.scale(per_layer, 1.0f / std::sqrt(2.0f), n);
  }
  // Deepstack (Qwen3-VL): an image token's input row holds, after its embedding, one feature per
  // deepstack layer; feature l is added to the token's residual stream after layer l
  // (transformers Qwen3VLTextModel._deepstack_process). Gathered here, [layer][image row][dim].
  const int deepstack = b.input_embeds.empty() ? 0 : std::min(c.deepstack_layers, c.n_layers);
  float* deepstack_rows = nullptr;
  if (deepstack > 0) {
    const std::size_t E = b.input_embeds.size();
    deepstack_host_.resize(std::size_t(deepstack) * E * std::size_t(dim));
    for (int l = 0; l < deepstack; ++l)
      for (std::size_t i = 0; i < E; ++i)
        std::copy_n(b.input_embeds[i].row + std::size_t(l + 1) * std::size_t(dim), dim,
                    deepstack_host_.begin() + std::ptrdiff_t((std::size_t(l) * E + i) * std::size_t(dim)));
    deepstack_rows = workspace<float>(deepstack_, deepstack_host_.size());
    ops_.copy_to_backend(deepstack_rows, deepstack_host_.data(), deepstack_host_.size() * sizeof(float));
  }
  auto add_deepstack = [&](int l) {
    if (l >= deepstack) return;
    const std::size_t E = b.input_embeds.size();
    for (std::size_t i = 0; i < E; ++i)
      ops_.add(x + std::int64_t(b.input_embeds[i].token) * dim,
               deepstack_rows + (std::size_t(l) * E + i) * std::size_t(dim), dim);
  };
  // Pre-norm-only models (Llama and most) fuse each residual add with the next RMSNorm, exactly
  // as before the other placements existed.
  const bool fused = c.pre_norm && !c.post_norm;
  if (fused) ops_.rms_norm(xb, x, layers_[0].attn_norm, T, dim, c.norm_eps);
  for (int l = 0; l < c.n_layers; ++l) {
    PackedLayer& pl = layers_[l];
    const int g = std::max(0, cache.group_of_layer(l));
    const float* h = xb;
    if (!fused) {
      if (c.pre_norm)
        ops_.rms_norm(xb, x, pl.attn_norm, T, dim, c.norm_eps);
      else
        h = x;
    }
    if (pl.delta_net) {
      for (int r = 0; r < b.num_requests(); ++r) {
        kernels::DeltaNetSequence& sq = delta_seqs_[std::size_t(r)];
        sq.start = b.query_start_loc[r];
        sq.len = b.query_start_loc[r + 1] - b.query_start_loc[r];
        sq.state = cache.state(l, b.state_slots[std::size_t(r)]);
        sq.num_saves = 0;
      }
      for (const ForwardBatch::StateSave& sv : b.state_saves) {
        kernels::DeltaNetSequence& sq = delta_seqs_.at(std::size_t(sv.request));
        if (sq.num_saves == kernels::DeltaNetSequence::kMaxSaves)
          throw std::logic_error("DecoderModel: more state checkpoints for one request than a step takes");
        sq.save_after[sq.num_saves] = sv.after;
        sq.save_to[sq.num_saves++] = cache.state(l, sv.slot);
      }
      pl.delta_net->forward(ops_, ws_, xb, h, delta_seqs_.data(), b.num_requests(), T);
    } else {
      const layers::KvCacheLayer kv{cache.key(l), cache.value(l), cache.dtype, group_slots[g], &group_meta[g]};
      pl.attention->forward(ops_, ws_, xb, h, positions, kv, T, mrope_positions);
    }
    if (abandon && abandon()) return false;
    if (!pl.spec.ffn) {  // attention only (an MTP block without a feed-forward)
      ops_.add(x, xb, std::int64_t(T) * dim);
      if (fused && l + 1 < c.n_layers) ops_.rms_norm(xb, x, layers_[l + 1].attn_norm, T, dim, c.norm_eps);
      if (pl.output_scale != 1.0f) ops_.scale(x, pl.output_scale, std::int64_t(T) * dim);
      continue;
    }
    if (fused) {
      ops_.fused_add_rms_norm(xb, x, xb, pl.ffn_norm, T, dim, c.norm_eps);
      // A dense MLP may write its output over its input; the experts read it to the end.
      float* y = pl.spec.moe ? ffn : xb;
      feed_forward(pl, y, xb, T);
      if (l < deepstack) {
        ops_.add(x, y, std::int64_t(T) * dim);
        add_deepstack(l);
        if (l + 1 < c.n_layers) ops_.rms_norm(xb, x, layers_[l + 1].attn_norm, T, dim, c.norm_eps);
      } else if (l + 1 < c.n_layers) {
        ops_.fused_add_rms_norm(xb, x, y, layers_[l + 1].attn_norm, T, dim, c.norm_eps);
      } else {
        ops_.add(x, y, std::int64_t(T) * dim);
      }
      if (abandon && abandon()) return false;
      continue;
    }
    if (c.post_norm) ops_.rms_norm(xb, xb, pl.post_attention_norm, T, dim, c.norm_eps);
    ops_.add(x, xb, std::int64_t(T) * dim);
    if (c.pre_norm) {
      ops_.rms_norm(xb, x, pl.ffn_norm, T, dim, c.norm_eps);
      h = xb;
    } else {
      h = x;
    }
    if (pl.moe && pl.mlp)
      dense_and_experts(pl, ffn, h, x, T);
    else
      feed_forward(pl, ffn, h, T);
    if (c.post_norm) ops_.rms_norm(ffn, ffn, pl.post_ffw_norm, T, dim, c.norm_eps);
    ops_.add(x, ffn, std::int64_t(T) * dim);
    if (per_layer) {
      // x += rms_norm(proj(gelu_tanh(x·Wgate) * per_layer[l]))·post_norm
      const int P = c.per_layer_input_size;
      float* gate = workspace<float>(per_layer_gate_, std::size_t(T) * P);
      ops_.linear(gate, x, *pl.per_layer_gate, T);
      ops_.gelu_tanh_mul(gate, per_layer + std::int64_t(l) * P, pl_width, T, P);
      ops_.linear(ffn, gate, *pl.per_layer_proj, T);
      ops_.rms_norm(ffn, ffn, pl.per_layer_post_norm, T, dim, c.norm_eps);
      ops_.add(x, ffn, std::int64_t(T) * dim);
    }
    if (pl.output_scale != 1.0f) ops_.scale(x, pl.output_scale, std::int64_t(T) * dim);
    add_deepstack(l);
    if (abandon && abandon()) return false;
  }

  // Final norm and classifier only for the rows that sample.
  const int S = int(b.logits_indices.size());
  float* sel = workspace<float>(sel_, std::size_t(std::max(S, 1)) * dim);
  float* out = workspace<float>(logits_, std::size_t(std::max(S, 1)) * c.vocab_size);
  ops_.gather_rows(sel, x, upload(logit_rows_, b.logits_indices), S, dim);
  ops_.rms_norm(sel, sel, final_norm_, S, dim, c.norm_eps);
  ops_.linear(out, sel, *classifier_ref_, S);
  if (c.final_logit_softcap > 0.0f) ops_.softcap(out, c.final_logit_softcap, std::int64_t(S) * c.vocab_size);
  logits.resize(std::size_t(S) * c.vocab_size);
  ops_.copy_to_host(logits.data(), out, logits.size() * sizeof(float));
  // Hidden states asked for (an MTP head's input): the same norm over their rows.
  const int Hn = int(b.hidden_indices.size());
  hidden_.resize(std::size_t(Hn) * dim);
  if (Hn > 0) {
    float* hs = workspace<float>(hidden_sel_, std::size_t(Hn) * dim);
    ops_.gather_rows(hs, x, upload(hidden_rows_, b.hidden_indices), Hn, dim);
    ops_.rms_norm(hs, hs, final_norm_, Hn, dim, c.norm_eps);
    ops_.copy_to_host(hidden_.data(), hs, hidden_.size() * sizeof(float));
  }
  return true;
}

}  // namespace pagedchat
