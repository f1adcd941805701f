// Tiny vision towers of tests/data/vision laid out as transformers saves them, for
// test_vision_hf: the clip projectors' tensors under transformers' names, shapes and layouts
// (modeling_siglip.py / modeling_gemma3.py, modeling_gemma4.py, modeling_qwen3_vl.py), written
// from those files independently of engine/vision/hf_vision.cpp's table, with config.json
// objects that describe them.
#pragma once

#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/hf/safetensors.h"

namespace hftowers {

using namespace pagedchat;
using nlohmann::json;

inline const std::string kVision = VISION_DIR;
inline std::string gemma3Projector() { return kVision + "/gemma3-tiny-mmproj.gguf"; }
inline std::string gemma4Projector() { return kVision + "/gemma4/gemma4-tiny-mmproj.gguf"; }

/// One tensor for a safetensors file, owning its bytes.
struct HfTensor {
  std::string name;
  StDtype dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

/// "<prefix><index>.<name>.<suffix>" (v.blk.3.attn_q.weight) split into its parts; "<prefix><index>.<suffix>"
/// (mm.0.weight) gives an empty name. Nothing for another prefix or a missing index.
struct NumberedName {
  std::string index, name, suffix;
};
inline std::optional<NumberedName> splitNumbered(const std::string& full, const std::string& prefix) {
  if (full.rfind(prefix, 0) != 0) return std::nullopt;
  const std::size_t dot = full.find('.', prefix.size()), last = full.rfind('.');
  if (dot == std::string::npos || dot == prefix.size()) return std::nullopt;
  NumberedName n{full.substr(prefix.size(), dot - prefix.size()), "", full.substr(last + 1)};
  if (n.index.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  if (last > dot) n.name = full.substr(dot + 1, last - dot - 1);
  return n;
}

inline StDtype stDtypeOf(const GgufTensorInfo& t) {
  if (t.type == GgmlType::F16) return StDtype::kF16;
  if (t.type == GgmlType::F32) return StDtype::kF32;
  throw std::runtime_error("test projector tensor " + t.name + " is neither F16 nor F32");
}

/// A GGUF tensor as transformers would hold it: the same bytes, numpy shape = ne reversed.
inline HfTensor asIs(const GgufFile& f, const GgufTensorInfo& t, const std::string& name) {
  const uint8_t* d = f.tensor_data(t);
  return {name, stDtypeOf(t), std::vector<uint64_t>(t.ne.rbegin(), t.ne.rend()),
          std::vector<uint8_t>(d, d + t.n_bytes)};
}

/// Float32 values as an F32 safetensors tensor.
inline HfTensor floats(const std::string& name, std::vector<uint64_t> shape, const std::vector<float>& v) {
  HfTensor t{name, StDtype::kF32, std::move(shape), std::vector<uint8_t>(v.size() * 4)};
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

inline std::vector<float> valuesOf(const GgufFile& f, const GgufTensorInfo& t) {
  std::vector<float> v(t.n_elements);
  dequantize(t.type, f.tensor_data(t), v.data(), t.n_elements);
  return v;
}

/// Matrices (2-D and up) as BF16 (round to nearest even), the rest as they are: how released
/// checkpoints store the towers.
inline void toBf16(std::vector<HfTensor>& ts) {
  for (HfTensor& t : ts) {
    if (t.shape.size() < 2) continue;
    std::vector<float> v(t.bytes.size() / (t.dtype == StDtype::kF32 ? 4 : 2));
    StTensor view{t.name, t.dtype, t.shape, v.size(), t.bytes.data(), t.bytes.size(), "mem"};
    to_float32(view, v.data());
    t.bytes.resize(v.size() * 2);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const uint16_t b = f32_to_bf16(v[i]);
      std::memcpy(t.bytes.data() + i * 2, &b, 2);
    }
    t.dtype = StDtype::kBF16;
  }
}

/// Gemma 3's tower and projector under transformers' names (prefix "model." or "": before and
/// after transformers 4.52). SigLIP: embeddings.patch_embedding (Conv2d [out, in, ky, kx]),
/// embeddings.position_embedding [patches, hidden], encoder.layers.N.{layer_norm1, layer_norm2,
/// self_attn.{q,k,v,out}_proj, mlp.fc1 (hidden -> ffn), mlp.fc2}, post_layernorm;
/// Gemma3MultiModalProjector: mm_soft_emb_norm (Gemma3RMSNorm: the file holds w, the norm
/// multiplies by 1 + w), mm_input_projection_weight [vision hidden, text hidden] (x @ W).
inline std::vector<HfTensor> gemma3Tower(const std::string& prefix) {
  const GgufFile f = GgufFile::open(gemma3Projector());
  const std::string tower = prefix + "vision_tower.vision_model.", proj = prefix + "multi_modal_projector.";
  static const std::map<std::string, std::string> kBlock = {
      {"ln1", "layer_norm1"},         {"ln2", "layer_norm2"},         {"attn_q", "self_attn.q_proj"},
      {"attn_k", "self_attn.k_proj"}, {"attn_v", "self_attn.v_proj"}, {"attn_out", "self_attn.out_proj"},
      {"ffn_up", "mlp.fc1"},          {"ffn_down", "mlp.fc2"}};
  std::vector<HfTensor> out;
  for (const GgufTensorInfo& t : f.tensors()) {
    if (const auto m = splitNumbered(t.name, "v.blk.")) {
      out.push_back(asIs(f, t, tower + "encoder.layers." + m->index + "." + kBlock.at(m->name) + "." + m->suffix));
    } else if (t.name == "v.patch_embd.weight" || t.name == "v.patch_embd.bias") {
      out.push_back(asIs(f, t, tower + "embeddings.patch_embedding." + t.name.substr(13)));
    } else if (t.name == "v.position_embd.weight") {
      out.push_back(asIs(f, t, tower + "embeddings.position_embedding.weight"));
    } else if (t.name == "v.post_ln.weight" || t.name == "v.post_ln.bias") {
      out.push_back(asIs(f, t, tower + "post_layernorm." + t.name.substr(10)));
    } else if (t.name == "mm.soft_emb_norm.weight") {
      std::vector<float> w = valuesOf(f, t);
      for (float& v : w) v -= 1.0f;
      out.push_back(floats(proj + "mm_soft_emb_norm.weight", {t.ne[0]}, w));
    } else if (t.name == "mm.input_projection.weight") {
      out.push_back(asIs(f, t, proj + "mm_input_projection_weight"));  // ne {text, vision} = (vision, text)
    } else {
      throw std::runtime_error("unexpected tensor " + t.name + " in the Gemma 3 test projector");
    }
  }
  return out;
}

inline json gemma3Config() {
  return json::parse(R"({
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "mm_tokens_per_image": 16,
    "text_config": {"hidden_size": 64},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                      "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 32, "patch_size": 4,
                      "layer_norm_eps": 1e-6, "vision_use_head": false}})");
}

/// Gemma 4's tower and embedder under transformers' names: model.vision_tower.patch_embedder.
/// {input_proj (Linear over a patch's pixels in (ky, kx, channel) order), position_embedding_table
/// [2, positions, hidden]}, encoder.layers.N.{input_layernorm, post_attention_layernorm,
/// pre_feedforward_layernorm, post_feedforward_layernorm, self_attn.{q,k}_norm,
/// self_attn.{q,k,v,o}_proj and mlp.{gate,up,down}_proj as Gemma4ClippableLinear: .linear.weight
/// and the scalars input_min / input_max / output_min / output_max}, std_bias, std_scale;
/// model.embed_vision.embedding_projection [text hidden, vision hidden].
inline std::vector<HfTensor> gemma4Tower() {
  const GgufFile f = GgufFile::open(gemma4Projector());
  const std::string tower = "model.vision_tower.";
  static const std::map<std::string, std::string> kNorm = {
      {"ln1", "input_layernorm"},           {"attn_post_norm", "post_attention_layernorm"},
      {"ln2", "pre_feedforward_layernorm"}, {"ffn_post_norm", "post_feedforward_layernorm"},
      {"attn_q_norm", "self_attn.q_norm"},  {"attn_k_norm", "self_attn.k_norm"}};
  static const std::map<std::string, std::string> kLinear = {
      {"attn_q", "self_attn.q_proj"},   {"attn_k", "self_attn.k_proj"}, {"attn_v", "self_attn.v_proj"},
      {"attn_out", "self_attn.o_proj"}, {"ffn_gate", "mlp.gate_proj"},  {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"}};
  std::vector<HfTensor> out;
  for (const GgufTensorInfo& t : f.tensors()) {
    if (const auto m = splitNumbered(t.name, "v.blk.")) {
      const std::string layer = tower + "encoder.layers." + m->index + ".";
      if (kNorm.count(m->name)) {
        out.push_back(asIs(f, t, layer + kNorm.at(m->name) + ".weight"));
      } else if (m->suffix == "weight") {
        out.push_back(asIs(f, t, layer + kLinear.at(m->name) + ".linear.weight"));
      } else {
        HfTensor s = asIs(f, t, layer + kLinear.at(m->name) + "." + m->suffix);
        s.shape.clear();  // a 0-d tensor in the checkpoint
        out.push_back(std::move(s));
      }
    } else if (t.name == "v.patch_embd.weight") {
      // ne {P, P, 3, H}: element (o, c, ky, kx) at ((o * 3 + c) * P + ky) * P + kx; transformers'
      // input_proj.weight[o, (ky * P + kx) * 3 + c].
      const std::vector<float> w = valuesOf(f, t);
      const uint64_t P = t.ne[0], H = t.ne[3];
      std::vector<float> hf(w.size());
      for (uint64_t o = 0; o < H; ++o)
        for (uint64_t c = 0; c < 3; ++c)
          for (uint64_t y = 0; y < P; ++y)
            for (uint64_t x = 0; x < P; ++x) hf[o * 3 * P * P + (y * P + x) * 3 + c] = w[((o * 3 + c) * P + y) * P + x];
      out.push_back(floats(tower + "patch_embedder.input_proj.weight", {H, 3 * P * P}, hf));
    } else if (t.name == "v.position_embd.weight") {
      out.push_back(asIs(f, t, tower + "patch_embedder.position_embedding_table"));
    } else if (t.name == "v.std_bias" || t.name == "v.std_scale") {
      out.push_back(asIs(f, t, tower + t.name.substr(2)));
    } else if (t.name == "mm.input_projection.weight") {
      out.push_back(asIs(f, t, "model.embed_vision.embedding_projection.weight"));
    } else {
      throw std::runtime_error("unexpected tensor " + t.name + " in the Gemma 4 test projector");
    }
  }
  return out;
}

inline json gemma4Config() {
  return json::parse(R"({
    "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
    "text_config": {"hidden_size": 64},
    "vision_config": {"model_type": "gemma4_vision", "hidden_size": 32, "intermediate_size": 48,
                      "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
                      "head_dim": 16, "patch_size": 4, "pooling_kernel_size": 3,
                      "position_embedding_size": 512, "rms_norm_eps": 1e-6, "use_clipped_linears": true,
                      "standardize": true, "rope_parameters": {"rope_type": "default", "rope_theta": 100.0}}})");
}

/// Qwen3-VL's tower under transformers' names (Qwen3VLVisionModel, "model.visual."):
/// patch_embed.proj (Conv3d [hidden, 3, 2 frames, P, P]: the clip file's two kernels are its
/// frames), pos_embed [positions, hidden], blocks.N.{norm1, norm2, attn.qkv, attn.proj,
/// mlp.linear_fc1, mlp.linear_fc2}, deepstack_merger_list.K.{norm, linear_fc1, linear_fc2} for
/// the K-th entry of deepstack_visual_indexes (blocks 0 and 1 here), merger.{norm, linear_fc1,
/// linear_fc2}. `mmproj`: another projector of the kind (Qwen3.5's, whose Qwen3_5VisionModel is
/// this tower without deepstack mergers).
inline std::vector<HfTensor> qwen3vlTower(const std::string& mmproj = kVision + "/qwen3vl/qwen3vl-tiny-mmproj.gguf") {
  const GgufFile f = GgufFile::open(mmproj);
  const std::string tower = "model.visual.";
  static const std::map<std::string, std::string> kBlock = {{"ln1", "norm1"},
                                                            {"ln2", "norm2"},
                                                            {"attn_qkv", "attn.qkv"},
                                                            {"attn_out", "attn.proj"},
                                                            {"ffn_up", "mlp.linear_fc1"},
                                                            {"ffn_down", "mlp.linear_fc2"}};
  static const std::map<std::string, std::string> kMerger = {
      {"norm", "norm"}, {"fc1", "linear_fc1"}, {"fc2", "linear_fc2"}, {"0", "linear_fc1"}, {"2", "linear_fc2"}};
  std::vector<HfTensor> out;
  const GgufTensorInfo *k0 = f.find_tensor("v.patch_embd.weight"), *k1 = f.find_tensor("v.patch_embd.weight.1");
  if (!k0 || !k1 || k0->type != k1->type) throw std::runtime_error("the Qwen3-VL test projector lacks its two kernels");
  {
    // [hidden, 3, P, P] per frame -> [hidden, 3, 2, P, P].
    const uint64_t P = k0->ne[0], H = k0->ne[3], plane = P * P * (k0->type == GgmlType::F16 ? 2 : 4);
    HfTensor t{
        tower + "patch_embed.proj.weight", stDtypeOf(*k0), {H, 3, 2, P, P}, std::vector<uint8_t>(2 * k0->n_bytes)};
    for (uint64_t oc = 0; oc < H * 3; ++oc)
      for (uint64_t fr = 0; fr < 2; ++fr)
        std::memcpy(t.bytes.data() + (oc * 2 + fr) * plane, f.tensor_data(fr ? *k1 : *k0) + oc * plane, plane);
    out.push_back(std::move(t));
  }
  for (const GgufTensorInfo& t : f.tensors()) {
    if (t.name == "v.patch_embd.weight" || t.name == "v.patch_embd.weight.1") continue;
    if (const auto m = splitNumbered(t.name, "v.blk.")) {
      out.push_back(asIs(f, t, tower + "blocks." + m->index + "." + kBlock.at(m->name) + "." + m->suffix));
    } else if (const auto d = splitNumbered(t.name, "v.deepstack.")) {
      // deepstack_visual_indexes [0, 1]: entry K is block K.
      out.push_back(
          asIs(f, t, tower + "deepstack_merger_list." + d->index + "." + kMerger.at(d->name) + "." + d->suffix));
    } else if (const auto p = splitNumbered(t.name, "mm."); p && p->name.empty()) {
      out.push_back(asIs(f, t, tower + "merger." + kMerger.at(p->index) + "." + p->suffix));
    } else if (t.name == "v.post_ln.weight" || t.name == "v.post_ln.bias") {
      out.push_back(asIs(f, t, tower + "merger.norm." + t.name.substr(10)));
    } else if (t.name == "v.patch_embd.bias") {
      out.push_back(asIs(f, t, tower + "patch_embed.proj.bias"));
    } else if (t.name == "v.position_embd.weight") {
      out.push_back(asIs(f, t, tower + "pos_embed.weight"));
    } else {
      throw std::runtime_error("unexpected tensor " + t.name + " in the Qwen3-VL test projector");
    }
  }
  return out;
}

inline json qwen3vlConfig() {
  return json::parse(R"({
    "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
    "image_token_id": 151655, "vision_start_token_id": 151652, "vision_end_token_id": 151653,
    "text_config": {"hidden_size": 64},
    "vision_config": {"model_type": "qwen3_vl", "depth": 3, "hidden_size": 32, "intermediate_size": 48,
                      "num_heads": 2, "in_channels": 3, "patch_size": 4, "spatial_merge_size": 2,
                      "temporal_patch_size": 2, "out_hidden_size": 64, "num_position_embeddings": 36,
                      "deepstack_visual_indexes": [0, 1], "hidden_act": "gelu_pytorch_tanh"}})");
}

/// Qwen3.5's tiny tower (tests/data/vision/qwen35, README there) as a Qwen3_5ForConditionalGeneration
/// config.json's vision_config (Qwen3_5VisionConfig: no deepstack_visual_indexes).
inline json qwen35VisionConfig() {
  return json::parse(R"({"model_type": "qwen3_5", "depth": 2, "hidden_size": 48, "intermediate_size": 64,
                         "num_heads": 2, "in_channels": 3, "patch_size": 4, "spatial_merge_size": 2,
                         "temporal_patch_size": 2, "out_hidden_size": 64, "num_position_embeddings": 25,
                         "hidden_act": "gelu_pytorch_tanh"})");
}

}  // namespace hftowers
