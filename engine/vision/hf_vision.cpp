// A Hugging Face folder's vision tower and projector as a clip-format projector GGUF, in memory
// (see hf_vision.h). The names and layouts are llama.cpp's converter's (convert_hf_to_gguf.py:
// Gemma3VisionModel, the Gemma 4 vision class; gguf-py's tensor map), which is what the encoders
// in this folder read; the config keys are transformers' (SiglipVisionConfig, Gemma3Config,
// Gemma4VisionConfig) with their defaults.
#include "engine/vision/hf_vision.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/hf/hf_config.h"
#include "engine/loader/hf/safetensors.h"
#include "engine/vision/vit_ops.h"

namespace pagedchat {

namespace fs = std::filesystem;
using nlohmann::json;

// Named (not anonymous): the engine is built as unity batches.
namespace hf_vision_impl {

std::string shape_text(const std::vector<uint64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

/// The class whose image side this file converts, from config.json's "architectures" (else its
/// model_type), when it has a vision_config that is not null (an object, or something the
/// converter refuses by name); "" for none. `name` gets the class named, supported or not.
std::string vision_class(const json& config, std::string* name = nullptr) {
  if (!config.is_object()) return {};
  std::string a;
  if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty() &&
      config["architectures"][0].is_string()) {
    a = config["architectures"][0].get<std::string>();
  } else if (config.contains("model_type") && config["model_type"].is_string()) {
    const std::string t = config["model_type"].get<std::string>();
    a = t == "gemma3"        ? "Gemma3ForConditionalGeneration"
        : t == "gemma4"      ? "Gemma4ForConditionalGeneration"
        : t == "qwen3_vl"    ? "Qwen3VLForConditionalGeneration"
        : t == "qwen3_5"     ? "Qwen3_5ForConditionalGeneration"
        : t == "qwen3_5_moe" ? "Qwen3_5MoeForConditionalGeneration"
                             : t;
  }
  if (name) *name = a;
  const bool known = a == "Gemma3ForConditionalGeneration" || a == "Gemma4ForConditionalGeneration" ||
                     a == "Qwen3VLForConditionalGeneration" || a == "Qwen3_5ForConditionalGeneration" ||
                     a == "Qwen3_5MoeForConditionalGeneration";
  return known && config.contains("vision_config") && !config["vision_config"].is_null() ? a : std::string();
}

/// The GGUF being built: metadata, then tensors with their ggml shape and bytes.
class ProjectorBuilder {
 public:
  ProjectorBuilder(const std::string& dir) : dir_(dir), st_(SafetensorsSet::open_folder(dir)) {}

  GgufMetaWriter meta;

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error("'" + dir_ + "': " + what); }
  [[noreturn]] void fail_tensor(const StTensor& t, const std::string& what) const {
    throw std::runtime_error("tensor '" + t.name + "' in '" + t.file + "': " + what);
  }

  /// The first of `names` the folder has (null when none).
  const StTensor* find(const std::vector<std::string>& names) const {
    for (const std::string& n : names)
      if (const StTensor* t = st_.find(n)) return t;
    return nullptr;
  }
  /// The first of `names` the folder has, with the transformers `shape` and a float dtype; marks it used.
  const StTensor& get(const std::vector<std::string>& names, const std::vector<uint64_t>& shape) {
    const StTensor* t = find(names);
    if (!t) fail("tensor '" + names.front() + "' of the vision tower is missing from " + st_.source());
    if (t->shape != shape && !(shape.size() == 1 && shape[0] == 1 && t->shape.empty()))
      fail_tensor(*t, "has shape " + shape_text(t->shape) + ", the config says " + shape_text(shape));
    if (t->dtype != StDtype::kF32 && t->dtype != StDtype::kF16 && t->dtype != StDtype::kBF16)
      fail_tensor(*t,
                  std::string("has dtype ") + dtype_name(t->dtype) + " (the vision tower must be F32, F16 or BF16)");
    if (!vit::finite_floats(type_of(t->dtype), t->data, t->num_elements))
      fail_tensor(*t, "holds a value that is not finite");
    used_.insert(t->name);
    return *t;
  }

  /// Marks the first of `names` the folder has as read but not used (what transformers' class
  /// leaves unused by its config: Gemma 4's clamp scalars without use_clipped_linears).
  void ignore(const std::vector<std::string>& names) {
    if (const StTensor* t = find(names)) used_.insert(t->name);
  }

  /// Adds `t` as GGUF tensor `name` with its bytes as they are (read from the mapping when the
  /// image is built: the tower is copied once): ggml's ne is the shape reversed.
  void copy(const StTensor& t, const std::string& name) {
    std::vector<uint64_t> ne(t.shape.rbegin(), t.shape.rend());
    if (ne.empty()) ne = {1};
    tensors_.push_back({name, std::move(ne), type_of(t.dtype), {}, t.data, t.nbytes});
  }
  /// Adds `values` as the F32 GGUF tensor `name` of ggml shape `ne`.
  void add_f32(const std::string& name, std::vector<uint64_t> ne, const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    add(name, std::move(ne), GgmlType::F32, std::move(bytes));
  }
  void add(const std::string& name, std::vector<uint64_t> ne, GgmlType type, std::vector<uint8_t> bytes) {
    const std::size_t n = bytes.size();
    tensors_.push_back({name, std::move(ne), type, std::move(bytes), nullptr, n});
    tensors_.back().data = tensors_.back().owned.data();
  }
  static GgmlType type_of(StDtype d) {
    return d == StDtype::kF16 ? GgmlType::F16 : d == StDtype::kBF16 ? GgmlType::BF16 : GgmlType::F32;
  }

  /// Refuses a tensor under one of `prefixes` that no get() took.
  void check_all_used(const std::vector<std::string>& prefixes) const {
    for (const auto& [name, t] : st_.tensors()) {
      if (used_.count(name)) continue;
      for (const std::string& p : prefixes)
        if (name.starts_with(p))
          fail_tensor(t,
                      "is not part of the vision tower as config.json's vision_config describes it (unknown tensor)");
    }
  }

  /// The GGUF v3 image: header, metadata, tensor infos, data at 32-byte aligned offsets.
  std::vector<uint8_t> bytes() const {
    constexpr uint64_t kAlign = 32;
    std::string head = "GGUF";
    auto put64 = [&](uint64_t v) { head.append(reinterpret_cast<const char*>(&v), 8); };
    auto put32 = [&](uint32_t v) { head.append(reinterpret_cast<const char*>(&v), 4); };
    put32(3);
    put64(tensors_.size());
    put64(meta.count());
    head += meta.bytes();
    std::vector<uint64_t> offsets;
    uint64_t offset = 0;
    for (const Tensor& t : tensors_) {
      put64(t.name.size());
      head += t.name;
      put32(uint32_t(t.ne.size()));
      for (uint64_t n : t.ne) put64(n);
      put32(uint32_t(t.type));
      put64(offset);
      offsets.push_back(offset);
      offset = (offset + t.size + kAlign - 1) / kAlign * kAlign;
    }
    head.resize((head.size() + kAlign - 1) / kAlign * kAlign, '\0');
    std::vector<uint8_t> out(head.size() + offset, 0);
    std::memcpy(out.data(), head.data(), head.size());
    for (std::size_t i = 0; i < tensors_.size(); ++i)
      std::memcpy(out.data() + head.size() + offsets[i], tensors_[i].data, tensors_[i].size);
    return out;
  }

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
    std::vector<uint8_t> owned;     ///< bytes made here (reordered, converted); empty for a copy
    const uint8_t* data = nullptr;  ///< owned.data(), or the tensor in st_'s mapping
    std::size_t size = 0;
  };
  std::string dir_;
  SafetensorsSet st_;
  std::set<std::string> used_;
  std::vector<Tensor> tensors_;
};

/// An integer of `o` (default `def` when absent or null), within [lo, hi].
int int_key(const json& o, const char* key, int def, int lo, int hi, const std::string& where) {
  if (!o.contains(key) || o[key].is_null()) return def;
  if (!o[key].is_number_integer() || o[key].get<int64_t>() < lo || o[key].get<int64_t>() > hi)
    throw std::runtime_error(where + ": " + key + " must be an integer in " + std::to_string(lo) + ".." +
                             std::to_string(hi));
  return int(o[key].get<int64_t>());
}
double num_key(const json& o, const char* key, double def, const std::string& where) {
  if (!o.contains(key) || o[key].is_null()) return def;
  if (!o[key].is_number() || !std::isfinite(o[key].get<double>()))
    throw std::runtime_error(where + ": " + key + " must be a number");
  return o[key].get<double>();
}
bool bool_key(const json& o, const char* key, bool def, const std::string& where) {
  if (!o.contains(key) || o[key].is_null()) return def;
  if (!o[key].is_boolean()) throw std::runtime_error(where + ": " + key + " must be true or false");
  return o[key].get<bool>();
}
std::string str_key(const json& o, const char* key, const std::string& def, const std::string& where) {
  if (!o.contains(key) || o[key].is_null()) return def;
  if (!o[key].is_string()) throw std::runtime_error(where + ": " + key + " must be a string");
  return o[key].get<std::string>();
}

/// Common clip keys.
void write_common(ProjectorBuilder& b, const std::string& type, int text_hidden, int image_size, int patch, int hidden,
                  int ffn, int layers, int heads, double eps) {
  GgufMetaWriter& m = b.meta;
  m.kv_str("general.architecture", "clip");
  m.kv_str("general.type", "mmproj");
  m.kv_bool("clip.has_vision_encoder", true);
  m.kv_str("clip.projector_type", type);
  m.kv_u32("clip.vision.projection_dim", uint32_t(text_hidden));
  m.kv_u32("clip.vision.image_size", uint32_t(image_size));
  m.kv_u32("clip.vision.patch_size", uint32_t(patch));
  m.kv_u32("clip.vision.embedding_length", uint32_t(hidden));
  m.kv_u32("clip.vision.feed_forward_length", uint32_t(ffn));
  m.kv_u32("clip.vision.block_count", uint32_t(layers));
  m.kv_u32("clip.vision.attention.head_count", uint32_t(heads));
  m.kv_f32("clip.vision.attention.layer_norm_epsilon", float(eps));
}

/// Prefixes with and without transformers' "model." (checkpoints saved before and after its
/// 4.52 layout change).
std::vector<std::string> either(const std::string& rest) { return {"model." + rest, rest}; }
std::vector<std::string> named(const std::vector<std::string>& prefixes, const std::string& rest) {
  std::vector<std::string> out;
  for (const std::string& p : prefixes) out.push_back(p + rest);
  return out;
}

/// clip.vision.image_mean / image_std from the folder's preprocessor_config.json (0.5 each when
/// it or the keys are absent: SigLIP's and Qwen2-VL's processors' defaults).
void write_normalisation(ProjectorBuilder& b, const std::string& dir) {
  std::vector<float> mean{0.5f, 0.5f, 0.5f}, stdv{0.5f, 0.5f, 0.5f};
  const fs::path pre = fs::path(dir) / "preprocessor_config.json";
  std::error_code ec;
  if (fs::exists(pre, ec) && !fs::is_regular_file(pre, ec))
    throw std::runtime_error("'" + pre.string() + "' is not a file");
  if (fs::is_regular_file(pre, ec)) {
    json p;
    try {
      p = json::parse(read_text_file(pre.string()));
    } catch (const json::exception& e) {
      throw std::runtime_error("'" + pre.string() + "' is not valid JSON: " + e.what());
    }
    if (!p.is_object()) throw std::runtime_error("'" + pre.string() + "' is not a JSON object");
    for (auto [key, dst] : {std::pair<const char*, std::vector<float>*>{"image_mean", &mean}, {"image_std", &stdv}}) {
      if (!p.contains(key)) continue;
      const json& v = p[key];
      if (!v.is_array() || v.size() != 3)
        throw std::runtime_error("'" + pre.string() + "': " + key + " must be a list of 3 numbers");
      for (std::size_t i = 0; i < 3; ++i) {
        if (!v[i].is_number() || !std::isfinite(v[i].get<float>()))
          throw std::runtime_error("'" + pre.string() + "': " + key + " must hold finite numbers");
        (*dst)[i] = v[i].get<float>();
        const bool is_mean = dst == &mean;
        const float x = (*dst)[i];
        if (is_mean ? !(x >= -1e3f && x <= 1e3f) : !(x >= 1e-3f && x <= 1e3f))
          throw std::runtime_error("'" + pre.string() + "': " + key + " holds " + std::to_string(x) +
                                   (is_mean ? ", outside [-1000, 1000]" : ", outside [0.001, 1000]"));
      }
    }
  }
  b.meta.kv_f32s("clip.vision.image_mean", mean);
  b.meta.kv_f32s("clip.vision.image_std", stdv);
}

// Gemma 3: SigLIP (transformers modeling_siglip.py) + Gemma3MultiModalProjector.
void convert_gemma3(ProjectorBuilder& b, const json& top, const json& vc, int text_hidden, const std::string& dir,
                    const std::string& cfg_name) {
  const std::string where = cfg_name + " vision_config";
  // SiglipVisionConfig's defaults for what vision_config leaves out.
  const int hidden = int_key(vc, "hidden_size", 768, 1, 1 << 16, where);
  const int ffn = int_key(vc, "intermediate_size", 3072, 1, 1 << 18, where);
  const int layers = int_key(vc, "num_hidden_layers", 12, 1, 1024, where);
  const int heads = int_key(vc, "num_attention_heads", 12, 1, 1024, where);
  const int channels = int_key(vc, "num_channels", 3, 1, 64, where);
  const int image = int_key(vc, "image_size", 224, 1, 8192, where);
  const int patch = int_key(vc, "patch_size", 16, 1, 1024, where);
  const double eps = num_key(vc, "layer_norm_eps", 1e-6, where);
  const std::string act = str_key(vc, "hidden_act", "gelu_pytorch_tanh", where);
  if (channels != 3) b.fail(where + ": num_channels " + std::to_string(channels) + " (RGB images need 3)");
  if (act != "gelu_pytorch_tanh")
    b.fail(where + ": hidden_act '" + act + "' is not supported (SigLIP's gelu_pytorch_tanh is)");
  if (bool_key(vc, "vision_use_head", false, where))
    b.fail(where + ": vision_use_head true (Gemma 3 reads the patch features, not a pooled head)");
  if (image % patch != 0)
    b.fail(where + ": image_size " + std::to_string(image) + " is not a multiple of patch_size " +
           std::to_string(patch));
  const int side = image / patch;
  const int tokens = int_key(top, "mm_tokens_per_image", 256, 1, 1 << 20, cfg_name);
  const int per_side = int(std::lround(std::sqrt(double(tokens))));
  if (per_side * per_side != tokens)
    b.fail(cfg_name + ": mm_tokens_per_image " + std::to_string(tokens) + " is not a square grid");
  if (side % per_side != 0) {
    // Say where the patch grid comes from: a vision_config that leaves the keys out gets
    // SigLIP's defaults (224 / 16), which no real Gemma 3 tower has.
    auto from = [&](const char* key, int v) {
      return std::string(key) + " " + std::to_string(v) + (vc.contains(key) ? "" : " (absent: SigLIP's default)");
    };
    b.fail(cfg_name + ": mm_tokens_per_image " + std::to_string(tokens) + " (a " + std::to_string(per_side) + "x" +
           std::to_string(per_side) + " grid) cannot be pooled from the tower's " + std::to_string(side) + "x" +
           std::to_string(side) + " patches (" + from("image_size", image) + ", " + from("patch_size", patch) + ")");
  }
  write_common(b, "gemma3", text_hidden, image, patch, hidden, ffn, layers, heads, eps);
  b.meta.kv_bool("clip.use_gelu", true);
  b.meta.kv_u32("clip.vision.projector.scale_factor", uint32_t(side / per_side));
  // Gemma3Processor's image normalisation (preprocessor_config.json; SigLIP's 0.5 when absent).
  write_normalisation(b, dir);

  const std::vector<std::string> tower = either("vision_tower.vision_model."), proj = either("multi_modal_projector.");
  const uint64_t H = uint64_t(hidden), F = uint64_t(ffn), P = uint64_t(patch);
  b.copy(b.get(named(tower, "embeddings.patch_embedding.weight"), {H, 3, P, P}), "v.patch_embd.weight");
  b.copy(b.get(named(tower, "embeddings.patch_embedding.bias"), {H}), "v.patch_embd.bias");
  b.copy(b.get(named(tower, "embeddings.position_embedding.weight"), {uint64_t(side) * uint64_t(side), H}),
         "v.position_embd.weight");
  for (int l = 0; l < layers; ++l) {
    const std::string hf = "encoder.layers." + std::to_string(l) + ".", gg = "v.blk." + std::to_string(l) + ".";
    auto both = [&](const std::string& from, const std::string& to, std::vector<uint64_t> wshape, uint64_t n) {
      b.copy(b.get(named(tower, hf + from + ".weight"), wshape), gg + to + ".weight");
      b.copy(b.get(named(tower, hf + from + ".bias"), {n}), gg + to + ".bias");
    };
    both("layer_norm1", "ln1", {H}, H);
    both("layer_norm2", "ln2", {H}, H);
    both("self_attn.q_proj", "attn_q", {H, H}, H);
    both("self_attn.k_proj", "attn_k", {H, H}, H);
    both("self_attn.v_proj", "attn_v", {H, H}, H);
    both("self_attn.out_proj", "attn_out", {H, H}, H);
    both("mlp.fc1", "ffn_up", {F, H}, F);
    both("mlp.fc2", "ffn_down", {H, F}, H);
  }
  b.copy(b.get(named(tower, "post_layernorm.weight"), {H}), "v.post_ln.weight");
  b.copy(b.get(named(tower, "post_layernorm.bias"), {H}), "v.post_ln.bias");
  {
    // Gemma3RMSNorm multiplies by (1 + weight); the clip file holds the factor (the converter adds 1).
    const StTensor& t = b.get(named(proj, "mm_soft_emb_norm.weight"), {H});
    std::vector<float> w(H);
    to_float32(t, w.data());
    for (float& v : w) v += 1.0f;
    b.add_f32("mm.soft_emb_norm.weight", {H}, w);
  }
  // [vision, text] in transformers = ggml ne {text, vision}: the bytes as they are.
  b.copy(b.get(named(proj, "mm_input_projection_weight"), {H, uint64_t(text_hidden)}), "mm.input_projection.weight");
  b.check_all_used({"vision_tower.", "model.vision_tower.", "multi_modal_projector.", "model.multi_modal_projector."});
}

// Gemma 4: transformers' Gemma4VisionModel + Gemma4MultimodalEmbedder.
void convert_gemma4(ProjectorBuilder& b, const json& vc, int text_hidden, const std::string& cfg_name) {
  const std::string where = cfg_name + " vision_config";
  // Gemma4VisionConfig's defaults.
  const int hidden = int_key(vc, "hidden_size", 768, 1, 1 << 16, where);
  const int ffn = int_key(vc, "intermediate_size", 3072, 1, 1 << 18, where);
  const int layers = int_key(vc, "num_hidden_layers", 16, 1, 1024, where);
  const int heads = int_key(vc, "num_attention_heads", 12, 1, 1024, where);
  const int kv_heads = int_key(vc, "num_key_value_heads", heads, 1, 1024, where);
  const int head_dim = int_key(vc, "head_dim", 64, 1, 4096, where);
  const int patch = int_key(vc, "patch_size", 16, 1, 1024, where);
  const int pool = int_key(vc, "pooling_kernel_size", 3, 1, 16, where);
  const int positions = int_key(vc, "position_embedding_size", 10240, 1, 1 << 20, where);
  const double eps = num_key(vc, "rms_norm_eps", 1e-6, where);
  const std::string act = str_key(vc, "hidden_activation", "gelu_pytorch_tanh", where);
  if (act != "gelu_pytorch_tanh")
    b.fail(where + ": hidden_activation '" + act + "' is not supported (Gemma 4's gelu_pytorch_tanh is)");
  if (kv_heads != heads || head_dim * heads != hidden)
    b.fail(where + ": num_attention_heads " + std::to_string(heads) + " x head_dim " + std::to_string(head_dim) +
           " with num_key_value_heads " + std::to_string(kv_heads) + " over hidden_size " + std::to_string(hidden) +
           " (the encoder runs hidden_size / heads per head, as many key/value heads)");
  if (vc.contains("rope_parameters") && vc["rope_parameters"].is_object()) {
    const double theta = num_key(vc["rope_parameters"], "rope_theta", 100.0, where + " rope_parameters");
    if (theta != 100.0) b.fail(where + ": rope_theta " + std::to_string(theta) + " (the encoder's RoPE runs 100)");
  }
  write_common(b, "gemma4v", text_hidden, 224, patch, hidden, ffn, layers, heads, eps);
  b.meta.kv_u32("clip.vision.projector.scale_factor", uint32_t(pool));
  // Gemma4ImageProcessor does not normalise (the model maps x to 2x - 1 itself).
  b.meta.kv_f32s("clip.vision.image_mean", {0.0f, 0.0f, 0.0f});
  b.meta.kv_f32s("clip.vision.image_std", {1.0f, 1.0f, 1.0f});

  const std::vector<std::string> tower = either("vision_tower."), embed = either("embed_vision.");
  const uint64_t H = uint64_t(hidden), F = uint64_t(ffn), P = uint64_t(patch), D = uint64_t(head_dim);
  {
    // input_proj [hidden, P*P*3] reads a patch as (ky, kx, channel); the convolution the clip file
    // holds is [hidden, 3, P, P] (ne {P, P, 3, hidden}).
    const StTensor& t = b.get(named(tower, "patch_embedder.input_proj.weight"), {H, P * P * 3});
    const std::size_t es = dtype_size(t.dtype);
    std::vector<uint8_t> out(t.nbytes);
    for (uint64_t o = 0; o < H; ++o)
      for (uint64_t c = 0; c < 3; ++c)
        for (uint64_t y = 0; y < P; ++y)
          for (uint64_t x = 0; x < P; ++x)
            std::memcpy(out.data() + (((o * 3 + c) * P + y) * P + x) * es,
                        t.data + (o * P * P * 3 + (y * P + x) * 3 + c) * es, es);
    b.add("v.patch_embd.weight", {P, P, 3, H}, ProjectorBuilder::type_of(t.dtype), std::move(out));
  }
  b.copy(b.get(named(tower, "patch_embedder.position_embedding_table"), {2, uint64_t(positions), H}),
         "v.position_embd.weight");
  // Gemma4ClippableLinear: its weight, the attention projections' biases with attention_bias, and
  // with use_clipped_linears the clamp bounds the checkpoint has (a missing one stays unbounded,
  // as the class's buffers start at +-inf); without it transformers reads none of them.
  const bool clipped = bool_key(vc, "use_clipped_linears", false, where);
  const bool attention_bias = bool_key(vc, "attention_bias", false, where);
  auto linear = [&](const std::string& hf, const std::string& gg, uint64_t rows, uint64_t cols, bool bias) {
    b.copy(b.get(named(tower, hf + ".linear.weight"), {rows, cols}), gg + ".weight");
    if (bias) b.copy(b.get(named(tower, hf + ".linear.bias"), {rows}), gg + ".bias");
    for (const char* s : {"input_min", "input_max", "output_min", "output_max"}) {
      if (!clipped)
        b.ignore(named(tower, hf + "." + s));
      else if (b.find(named(tower, hf + "." + s)))
        b.copy(b.get(named(tower, hf + "." + s), {1}), gg + "." + s);
    }
  };
  for (int l = 0; l < layers; ++l) {
    const std::string hf = "encoder.layers." + std::to_string(l) + ".", gg = "v.blk." + std::to_string(l) + ".";
    auto norm = [&](const std::string& from, const std::string& to, uint64_t n) {
      b.copy(b.get(named(tower, hf + from + ".weight"), {n}), gg + to + ".weight");
    };
    norm("input_layernorm", "ln1", H);
    norm("post_attention_layernorm", "attn_post_norm", H);
    norm("pre_feedforward_layernorm", "ln2", H);
    norm("post_feedforward_layernorm", "ffn_post_norm", H);
    norm("self_attn.q_norm", "attn_q_norm", D);
    norm("self_attn.k_norm", "attn_k_norm", D);
    linear(hf + "self_attn.q_proj", gg + "attn_q", H, H, attention_bias);
    linear(hf + "self_attn.k_proj", gg + "attn_k", H, H, attention_bias);
    linear(hf + "self_attn.v_proj", gg + "attn_v", H, H, attention_bias);
    linear(hf + "self_attn.o_proj", gg + "attn_out", H, H, attention_bias);
    linear(hf + "mlp.gate_proj", gg + "ffn_gate", F, H, false);
    linear(hf + "mlp.up_proj", gg + "ffn_up", F, H, false);
    linear(hf + "mlp.down_proj", gg + "ffn_down", H, F, false);
  }
  // standardize: the pooled tokens get (x - std_bias) * std_scale (else transformers has neither).
  if (bool_key(vc, "standardize", false, where)) {
    b.copy(b.get(named(tower, "std_bias"), {H}), "v.std_bias");
    b.copy(b.get(named(tower, "std_scale"), {H}), "v.std_scale");
  } else {
    b.ignore(named(tower, "std_bias"));
    b.ignore(named(tower, "std_scale"));
  }
  // [text, vision] in transformers = ggml ne {vision, text}.
  b.copy(b.get(named(embed, "embedding_projection.weight"), {uint64_t(text_hidden), H}), "mm.input_projection.weight");
  b.check_all_used({"vision_tower.", "model.vision_tower.", "embed_vision.", "model.embed_vision."});
}

// Qwen3-VL: transformers' Qwen3VLVisionModel (patch_embed Conv3d over 2 frames, learned
// positions, blocks, deepstack mergers, merger). Qwen3.5's Qwen3_5VisionModel is the same tower
// without deepstack mergers (`deepstack` false: its config has no deepstack_visual_indexes).
void convert_qwen3vl(ProjectorBuilder& b, const json& vc, int text_hidden, const std::string& dir,
                     const std::string& cfg_name, bool deepstack) {
  const std::string where = cfg_name + " vision_config";
  // Qwen3VLVisionConfig's defaults.
  const int depth = int_key(vc, "depth", 27, 1, 1024, where);
  const int hidden = int_key(vc, "hidden_size", 1152, 1, 1 << 16, where);
  const int ffn = int_key(vc, "intermediate_size", 4304, 1, 1 << 18, where);
  const int heads = int_key(vc, "num_heads", 16, 1, 1024, where);
  const int channels = int_key(vc, "in_channels", 3, 1, 64, where);
  const int patch = int_key(vc, "patch_size", 16, 1, 1024, where);
  const int merge = int_key(vc, "spatial_merge_size", 2, 1, 8, where);
  const int frames = int_key(vc, "temporal_patch_size", 2, 1, 16, where);
  const int out = int_key(vc, "out_hidden_size", 3584, 1, 1 << 17, where);
  const int positions = int_key(vc, "num_position_embeddings", 2304, 1, 1 << 20, where);
  const std::string act = str_key(vc, "hidden_act", "gelu_pytorch_tanh", where);
  // Qwen3VLVisionConfig's default [8, 16, 24] when absent; every entry a block of this tower.
  const json deep_json = !deepstack                                ? json::array()
                         : vc.contains("deepstack_visual_indexes") ? vc["deepstack_visual_indexes"]
                                                                   : json{8, 16, 24};
  if (!deep_json.is_array()) b.fail(where + ": deepstack_visual_indexes must be a list of block numbers");
  std::vector<int> deep;
  for (const json& v : deep_json) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= depth ||
        (!deep.empty() && v.get<int64_t>() <= deep.back()))
      b.fail(where + ": deepstack_visual_indexes " + deep_json.dump() + " must name blocks 0.." +
             std::to_string(depth - 1) + " in increasing order" +
             (vc.contains("deepstack_visual_indexes") ? "" : " (absent: transformers' default)"));
    deep.push_back(int(v.get<int64_t>()));
  }
  if (channels != 3) b.fail(where + ": in_channels " + std::to_string(channels) + " (RGB images need 3)");
  if (frames != 2)
    b.fail(where + ": temporal_patch_size " + std::to_string(frames) + " (an image is 2 frames of Qwen3-VL's Conv3d)");
  if (act != "gelu_pytorch_tanh")
    b.fail(where + ": hidden_act '" + act + "' is not supported (Qwen3-VL's gelu_pytorch_tanh is)");
  if (out != text_hidden)
    b.fail(where + ": out_hidden_size " + std::to_string(out) + " is not the text model's hidden_size " +
           std::to_string(text_hidden));
  if (hidden % heads != 0 || (hidden / heads) % 4 != 0)
    b.fail(where + ": hidden_size " + std::to_string(hidden) + " over num_heads " + std::to_string(heads) +
           " is not a head size that is a multiple of 4 (the 2-D RoPE turns pairs per axis)");
  const int side = int(std::lround(std::sqrt(double(positions))));
  if (side * side != positions)
    b.fail(where + ": num_position_embeddings " + std::to_string(positions) + " is not a square grid");
  write_common(b, "qwen3vl_merger", text_hidden, side * patch, patch, hidden, ffn, depth, heads, 1e-6);
  b.meta.kv_bool("clip.use_gelu", true);
  b.meta.kv_u32("clip.vision.spatial_merge_size", uint32_t(merge));
  {
    std::vector<int32_t> flags(std::size_t(depth), 0);
    for (int l : deep) flags[std::size_t(l)] = 1;
    GgufValue v;
    v.type = GgufType::kArray;
    v.elem_type = GgufType::kBool;
    for (int32_t f : flags) v.uints.push_back(uint64_t(f));
    b.meta.kv_value("clip.vision.is_deepstack_layers", v);
  }
  write_normalisation(b, dir);

  const std::vector<std::string> tower = either("visual.");
  const uint64_t H = uint64_t(hidden), F = uint64_t(ffn), P = uint64_t(patch), M = H * uint64_t(merge * merge),
                 T = uint64_t(text_hidden);
  {
    // Conv3d [hidden, 3, 2, P, P]: one clip kernel per frame (v.patch_embd.weight, .weight.1).
    const StTensor& t = b.get(named(tower, "patch_embed.proj.weight"), {H, 3, 2, P, P});
    const std::size_t es = dtype_size(t.dtype), plane = P * P * es;
    for (uint64_t k = 0; k < 2; ++k) {
      std::vector<uint8_t> kernel(t.nbytes / 2);
      for (uint64_t oc = 0; oc < H * 3; ++oc)
        std::memcpy(kernel.data() + oc * plane, t.data + (oc * 2 + k) * plane, plane);
      b.add(k ? "v.patch_embd.weight.1" : "v.patch_embd.weight", {P, P, 3, H}, ProjectorBuilder::type_of(t.dtype),
            std::move(kernel));
    }
  }
  b.copy(b.get(named(tower, "patch_embed.proj.bias"), {H}), "v.patch_embd.bias");
  b.copy(b.get(named(tower, "pos_embed.weight"), {uint64_t(positions), H}), "v.position_embd.weight");
  auto both = [&](const std::string& from, const std::string& to, std::vector<uint64_t> wshape, uint64_t n) {
    b.copy(b.get(named(tower, from + ".weight"), wshape), to + ".weight");
    b.copy(b.get(named(tower, from + ".bias"), {n}), to + ".bias");
  };
  for (int l = 0; l < depth; ++l) {
    const std::string hf = "blocks." + std::to_string(l) + ".", gg = "v.blk." + std::to_string(l) + ".";
    both(hf + "norm1", gg + "ln1", {H}, H);
    both(hf + "norm2", gg + "ln2", {H}, H);
    both(hf + "attn.qkv", gg + "attn_qkv", {3 * H, H}, 3 * H);
    both(hf + "attn.proj", gg + "attn_out", {H, H}, H);
    both(hf + "mlp.linear_fc1", gg + "ffn_up", {F, H}, F);
    both(hf + "mlp.linear_fc2", gg + "ffn_down", {H, F}, H);
  }
  for (std::size_t k = 0; k < deep.size(); ++k) {
    const std::string hf = "deepstack_merger_list." + std::to_string(k) + ".",
                      gg = "v.deepstack." + std::to_string(deep[k]) + ".";
    both(hf + "norm", gg + "norm", {M}, M);
    both(hf + "linear_fc1", gg + "fc1", {M, M}, M);
    both(hf + "linear_fc2", gg + "fc2", {T, M}, T);
  }
  both("merger.norm", "v.post_ln", {H}, H);
  both("merger.linear_fc1", "mm.0", {M, M}, M);
  both("merger.linear_fc2", "mm.2", {T, M}, T);
  b.check_all_used({"visual.", "model.visual."});
}

json read_config(const std::string& path) {
  try {
    return json::parse(read_text_file(path));
  } catch (const json::exception& e) {
    throw std::runtime_error("'" + path + "' is not valid JSON: " + e.what());
  }
}

std::vector<uint8_t> convert(const std::string& dir, const std::string& cfg_name, const json& top, const json& vc,
                             const std::string& cls);

}  // namespace hf_vision_impl

using namespace hf_vision_impl;

namespace {

// The folder's config.json parsed, or nothing when there is none or it cannot be read or parsed:
// the quiet probes below answer "no" then; loading the folder reports the error itself.
std::optional<json> probe_config(const std::string& dir) {
  std::error_code ec;
  const fs::path config = fs::path(dir) / "config.json";
  if (dir.empty() || !fs::is_regular_file(config, ec)) return std::nullopt;
  try {
    return json::parse(read_text_file(config.string()));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

bool hf_folder_has_vision(const std::string& dir) {
  const std::optional<json> top = probe_config(dir);
  return top && !vision_class(*top).empty();
}

std::string hf_folder_vision_gap(const std::string& dir) {
  const std::optional<json> top = probe_config(dir);
  // A vision_config that is there (even a malformed one: loading the tower reports it).
  if (!top || !top->is_object() || (top->contains("vision_config") && !(*top)["vision_config"].is_null())) return {};
  // Only a class that has an image side (vision_class with an empty vision_config in its place).
  json probe = *top;
  probe["vision_config"] = json::object();
  std::string cls;
  if (vision_class(probe, &cls).empty()) return {};
  return "'" + (fs::path(dir) / "config.json").string() + "' names " + cls + " but its vision_config is " +
         (top->contains("vision_config") ? "null" : "absent") +
         ": the folder is loaded as a text model and reads no images";
}

std::vector<uint8_t> hf_vision_projector(const std::string& dir) {
  const std::string cfg_name = (fs::path(dir) / "config.json").string();
  std::error_code ec;
  if (!fs::is_regular_file(cfg_name, ec))
    throw std::runtime_error("'" + dir + "' has no config.json: a Hugging Face folder needs one beside its weights");
  const json top = read_config(cfg_name);
  std::string cls;
  if (vision_class(top, &cls).empty())
    throw std::runtime_error(
        "'" + cfg_name + "' describes no image side this engine runs" +
        (cls.empty() ? std::string() : " (" + cls + ")") +
        ": Gemma3ForConditionalGeneration, Gemma4ForConditionalGeneration, Qwen3VLForConditionalGeneration "
        "and Qwen3_5(Moe)ForConditionalGeneration folders with a vision_config do; others need their "
        "mmproj GGUF");
  const json& vc = top["vision_config"];
  if (!vc.is_object()) throw std::runtime_error("'" + cfg_name + "': vision_config is not an object");
  try {
    return convert(dir, cfg_name, top, vc, cls);
  } catch (const json::exception& e) {
    throw std::runtime_error("'" + cfg_name + "': " + e.what());
  }
}

namespace hf_vision_impl {

std::vector<uint8_t> convert(const std::string& dir, const std::string& cfg_name, const json& top, const json& vc,
                             const std::string& cls) {
  const json text = top.contains("text_config") && top["text_config"].is_object() ? top["text_config"] : json::object();
  // The text model's width: what the projector must make (Gemma3TextConfig's default 2304).
  const int text_hidden = int_key(text, "hidden_size", 2304, 1, 1 << 17, cfg_name + " text_config");
  ProjectorBuilder b(dir);
  b.meta.kv_str("general.name", fs::path(dir).filename().string() + " (vision, from " + cls + ")");
  if (cls == "Gemma3ForConditionalGeneration")
    convert_gemma3(b, top, vc, text_hidden, dir, cfg_name);
  else if (cls == "Gemma4ForConditionalGeneration")
    convert_gemma4(b, vc, text_hidden, cfg_name);
  else
    convert_qwen3vl(b, vc, text_hidden, dir, cfg_name, cls == "Qwen3VLForConditionalGeneration");
  return b.bytes();
}

}  // namespace hf_vision_impl

}  // namespace pagedchat
