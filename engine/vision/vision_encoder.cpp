// The vision encoder's loader and forward (see vision_encoder.h for the model and its sources).
// Matrices go through the CPU backend's packed linear() and matmul() (attention's Q·Kᵀ and P·V
// per head: GEMMs); softmax, norms, GELU and pooling are short loops here.
#include "engine/vision/vision_encoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/vision/hf_vision.h"
#include "engine/vision/vision_weights.h"
#include "engine/vision/vit_ops.h"
#include "kernels/backend_factory.h"
#include "kernels/ops.h"

namespace pagedchat {

VisionEncoder::~VisionEncoder() = default;

using vit::add_bias;
using vit::fail;
using vit::gelu_tanh;
using vit::layer_norm;
using vit::parallel_rows;
using vit::shape_str;
using vit::TensorSource;

std::unique_ptr<VisionEncoder> VisionEncoder::open(const std::string& path, int num_threads,
                                                   const VisionOptions& options) {
  // A Hugging Face folder's vision tower is converted to the clip form in memory (hf_vision.h);
  // the bytes live until the weights are packed (every encoder copies what it keeps).
  std::vector<uint8_t> converted;
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(path, ec);
  if (folder) converted = hf_vision_projector(path);
  GgufFile f = [&] {
    try {
      return folder ? GgufFile::parse(converted.data(), converted.size(), path) : GgufFile::open(path);
    } catch (const std::exception& e) {
      fail(path, std::string("cannot read the projector file: ") + e.what());
    }
  }();
  std::unique_ptr<VisionEncoder> enc(new VisionEncoder);
  enc->path_ = path;
  VisionConfig& c = enc->config_;
  const std::string arch = f.get_string("general.architecture").value_or("");
  if (arch != "clip")
    fail(path, "not an image projector (mmproj) file: general.architecture is '" + arch + "', not 'clip'" +
                   (arch.empty() ? "" : " (is it the model itself?)"));
  if (!f.get_bool("clip.has_vision_encoder").value_or(false))
    fail(path, "the projector file has no vision encoder (clip.has_vision_encoder is not true)");
  c.projector_type =
      f.get_string("clip.vision.projector_type").value_or(f.get_string("clip.projector_type").value_or(""));
  if (c.projector_type != "gemma3" && c.projector_type != "qwen3vl_merger" && c.projector_type != "gemma4v")
    fail(path, "projector type '" + c.projector_type +
                   "' is not supported (supported: gemma3 — Gemma 3's vision tower; qwen3vl_merger — Qwen3-VL's "
                   "and Qwen3.5's; gemma4v — Gemma 4's)");
  auto get = [&](const std::string& key, int64_t lo, int64_t hi) -> int {
    const std::optional<int64_t> v = f.get_int(key);
    if (!v) fail(path, "key '" + key + "' is missing");
    if (*v < lo || *v > hi)
      fail(path, "key '" + key + "' is " + std::to_string(*v) + ", outside " + std::to_string(lo) + ".." +
                     std::to_string(hi));
    return int(*v);
  };
  c.image_size = get("clip.vision.image_size", 1, 8192);
  c.patch_size = get("clip.vision.patch_size", 1, 1024);
  c.hidden_size = get("clip.vision.embedding_length", 1, 1 << 16);
  c.intermediate_size = get("clip.vision.feed_forward_length", 1, 1 << 18);
  c.num_layers = get("clip.vision.block_count", 1, 1024);
  c.num_heads = get("clip.vision.attention.head_count", 1, 1024);
  const double eps = f.get_float("clip.vision.attention.layer_norm_epsilon").value_or(1e-6);
  if (!(eps > 0 && eps < 1)) fail(path, "layer_norm_epsilon " + std::to_string(eps) + " is outside (0, 1)");
  c.eps = float(eps);
  if (c.hidden_size % c.num_heads != 0)
    fail(path, "embedding_length " + std::to_string(c.hidden_size) + " is not a multiple of head_count " +
                   std::to_string(c.num_heads));
  if (c.image_size % c.patch_size != 0)
    fail(path, "image_size " + std::to_string(c.image_size) + " is not a multiple of patch_size " +
                   std::to_string(c.patch_size));
  for (const char* key : {"clip.vision.image_mean", "clip.vision.image_std"}) {
    const GgufValue* v = f.get_array(key, GgufType::kFloat32);
    if (!v) continue;
    if (v->floats.size() != 3) fail(path, std::string("key '") + key + "' must hold 3 values");
    auto& dst = std::string(key).ends_with("mean") ? c.image_mean : c.image_std;
    for (int i = 0; i < 3; ++i) dst[std::size_t(i)] = float(v->floats[std::size_t(i)]);
  }
  // Pixels are scaled to [0, 1], then (x - mean) / std: real processors use means in [0, 1] and
  // spreads near 0.2-1. Far outside these, the normalised pixels overflow the encoder.
  for (float s : c.image_std)
    if (!(s >= 1e-3f && s <= 1e3f)) fail(path, "image_std holds a value outside [0.001, 1000]");
  for (float m : c.image_mean)
    if (!(m >= -1e3f && m <= 1e3f)) fail(path, "image_mean holds a value outside [-1000, 1000]");
  // The FFN's activation as llama.cpp's clip reads it: GELU (tanh) with clip.use_gelu, SiLU with
  // clip.use_silu, else the "quick" GELU x * sigmoid(1.702 x).
  c.activation = f.get_bool("clip.use_gelu").value_or(false)   ? VisionConfig::Activation::kGeluTanh
                 : f.get_bool("clip.use_silu").value_or(false) ? VisionConfig::Activation::kSilu
                                                               : VisionConfig::Activation::kGeluQuick;
  kernels::BackendOptions bo;
  bo.device = "cpu";
  bo.num_threads = num_threads;
  enc->backend_ = kernels::make_backend(bo);
  enc->threads_ = enc->backend_->num_threads();
  enc->w_ = std::make_unique<Weights>();
  if (c.projector_type == "qwen3vl_merger") {
    enc->open_qwen3vl(f, options);
    return enc;
  }
  if (c.projector_type == "gemma4v") {
    enc->open_gemma4v(f, options);
    if (options.bidirectional) c.bidirectional = *options.bidirectional;
    return enc;
  }
  c.merge = f.find("clip.vision.projector.scale_factor") ? get("clip.vision.projector.scale_factor", 1, 64) : 4;
  if (c.patches_per_side() % c.merge != 0)
    fail(path,
         "the " + std::to_string(c.patches_per_side()) + " patches a side do not pool by " + std::to_string(c.merge));
  c.image_begin = "<start_of_image>";
  c.image_end = "<end_of_image>";
  c.bidirectional = true;

  // Weights.
  kernels::Backend& b = *enc->backend_;
  Weights& w = *enc->w_;
  TensorSource src(f, path);
  const uint64_t H = uint64_t(c.hidden_size), F = uint64_t(c.intermediate_size), P = uint64_t(c.patch_size);
  const int np = c.patches_per_side() * c.patches_per_side();
  {
    // The patch convolution [hidden][3][p][p] is a [hidden, 3 p p] matrix (ggml ne {p, p, 3, hidden}).
    const GgufTensorInfo& t = src.info("v.patch_embd.weight", {P, P, 3, H});
    const std::optional<kernels::DType> dt = dtype_of(t.type);
    if (!dt || (*dt != kernels::DType::kF32 && *dt != kernels::DType::kF16 && *dt != kernels::DType::kBF16))
      fail(path, "tensor 'v.patch_embd.weight' must be F32, F16 or BF16");
    if (!vit::finite_floats(t.type, f.tensor_data(t), t.n_elements))
      fail(path, "tensor 'v.patch_embd.weight' holds a value that is not finite");
    kernels::WeightPart part{f.tensor_data(t), c.hidden_size, *dt, *dt};
    w.patch = b.pack_weights(std::span<const kernels::WeightPart>(&part, 1), int(3 * P * P));
    w.bytes += w.patch->bytes;
  }
  w.patch_b = src.has("v.patch_embd.bias") ? src.floats("v.patch_embd.bias", {H}) : std::vector<float>(H, 0.0f);
  w.pos = src.floats("v.position_embd.weight", {H, uint64_t(np)});
  if (src.has("v.pre_ln.weight")) fail(path, "a pre-encoder LayerNorm (v.pre_ln) is not expected for gemma3");
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string p = "v.blk." + std::to_string(l) + ".";
    Layer L;
    L.ln1_w = src.floats(p + "ln1.weight", {H});
    L.ln1_b = src.floats(p + "ln1.bias", {H});
    L.ln2_w = src.floats(p + "ln2.weight", {H});
    L.ln2_b = src.floats(p + "ln2.bias", {H});
    // Q, K, V stacked into one linear().
    std::vector<kernels::WeightPart> parts;
    for (const char* n : {"attn_q", "attn_k", "attn_v"}) {
      const GgufTensorInfo& t = src.info(p + n + ".weight", {H, H});
      const std::optional<kernels::DType> dt = dtype_of(t.type);
      if (!dt) fail(path, "tensor '" + p + n + ".weight' has a type the kernels cannot compute with");
      if (!vit::finite_floats(t.type, f.tensor_data(t), t.n_elements))
        fail(path, "tensor '" + p + n + ".weight' holds a value that is not finite");
      parts.push_back({f.tensor_data(t), c.hidden_size, *dt, *dt});
      const std::vector<float> bias = src.floats(p + n + ".bias", {H});
      L.qkv_b.insert(L.qkv_b.end(), bias.begin(), bias.end());
    }
    L.qkv = b.pack_weights(parts, c.hidden_size);
    w.bytes += L.qkv->bytes;
    L.out = src.matrix(b, p + "attn_out.weight", c.hidden_size, c.hidden_size, w.bytes);
    L.out_b = src.floats(p + "attn_out.bias", {H});
    // Older converters swapped the FFN names (ik_llama.cpp's clip.cpp swaps them back when the
    // tensor called ffn_down reads hidden_size inputs): the roles follow the shapes.
    std::string up = p + "ffn_up", down = p + "ffn_down";
    const GgufTensorInfo* named_down = f.find_tensor(down + ".weight");
    if (named_down && !named_down->ne.empty() && named_down->ne[0] == H) std::swap(up, down);
    L.up = src.matrix(b, up + ".weight", c.intermediate_size, c.hidden_size, w.bytes);
    L.up_b = src.floats(up + ".bias", {F});
    L.down = src.matrix(b, down + ".weight", c.hidden_size, c.intermediate_size, w.bytes);
    L.down_b = src.floats(down + ".bias", {H});
    w.layers.push_back(std::move(L));
  }
  if (src.has("v.blk." + std::to_string(c.num_layers) + ".ln1.weight"))
    fail(path, "the file has more encoder blocks than clip.vision.block_count " + std::to_string(c.num_layers));
  w.post_ln_w = src.floats("v.post_ln.weight", {H});
  w.post_ln_b = src.floats("v.post_ln.bias", {H});
  w.soft_norm = src.floats("mm.soft_emb_norm.weight", {H});
  {
    // mm.input_projection: ggml ne {text, vision}, i.e. rows of text-width per vision feature; the
    // linear() wants [text, vision]: transposed here (float32, small).
    const GgufTensorInfo* t = f.find_tensor("mm.input_projection.weight");
    if (!t) fail(path, "tensor 'mm.input_projection.weight' is missing");
    if (t->ne.size() < 2 || t->ne[1] != H || t->ne[0] < 1 || t->ne[0] > (1u << 17))
      fail(path, "tensor 'mm.input_projection.weight' has shape " + shape_str(t->ne) + ", expected [text hidden, " +
                     std::to_string(H) + "]");
    c.text_hidden_size = int(t->ne[0]);
    const std::vector<float> m = src.floats("mm.input_projection.weight", {uint64_t(c.text_hidden_size), H});
    std::vector<float> mt(m.size());
    for (uint64_t v = 0; v < H; ++v)
      for (int o = 0; o < c.text_hidden_size; ++o)
        mt[std::size_t(o) * H + v] = m[v * uint64_t(c.text_hidden_size) + uint64_t(o)];
    kernels::WeightPart part{mt.data(), c.text_hidden_size, kernels::DType::kF32, kernels::DType::kF32};
    w.proj = b.pack_weights(std::span<const kernels::WeightPart>(&part, 1), c.hidden_size);
    w.bytes += w.proj->bytes;
  }
  w.bytes += (w.pos.size() + w.patch_b.size()) * sizeof(float);
  return enc;
}

void VisionEncoder::check_text_model(int text_hidden_size, const std::string& text_model_name) const {
  if (text_hidden_size != config_.text_hidden_size)
    throw std::runtime_error(path_ + ": this projector makes embeddings of width " +
                             std::to_string(config_.text_hidden_size) + ", but the model " + text_model_name +
                             " has hidden size " + std::to_string(text_hidden_size) +
                             " (is it the mmproj of another model?)");
}

std::size_t VisionEncoder::weight_bytes() const { return w_ ? w_->bytes : 0; }

RgbImage VisionEncoder::fit(const RgbImage& image) const {
  const auto [w, h] = fit_size(image.width, image.height);
  if (image.width == w && image.height == h) return image;
  return config_.dynamic_size ? resize_bicubic(image, w, h) : resize_bilinear(image, w, h);
}

ImageEmbeddings VisionEncoder::encode(const RgbImage& image, const VisionStopCheck& stop) {
  // A picture at a size the encoder takes (a request's, fitted when it was placed) is encoded as
  // it is: fitting it again need not give the same size (fit() rounds), and its placeholder
  // counted the tokens of this one.
  const RgbImage sized = takes_size(image.width, image.height) ? image : fit(image);
  const std::vector<float> px = normalized(sized);
  ImageEmbeddings e = encode_preprocessed(px, sized.width, sized.height, stop);
  for (float v : e.data)
    if (!std::isfinite(v))
      throw std::runtime_error(path_ +
                               ": the image encoder's output is not finite (its weights overflow on this "
                               "picture: a broken projector)");
  return e;
}

bool VisionEncoder::takes_size(int width, int height) const {
  try {
    grid(RgbImage{width, height, {}});
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::vector<float> VisionEncoder::preprocess(const RgbImage& image) const { return normalized(fit(image)); }

std::vector<float> VisionEncoder::normalized(const RgbImage& sized) const {
  std::vector<float> out(sized.pixels.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::size_t ch = i % 3;
    out[i] = (float(sized.pixels[i]) / 255.0f - config_.image_mean[ch]) / config_.image_std[ch];
  }
  return out;
}

ImageEmbeddings VisionEncoder::encode_preprocessed(const std::vector<float>& px, int width, int height,
                                                   const VisionStopCheck& stop) {
  if (g4_) return encode_gemma4v(px, width, height, stop);
  if (config_.dynamic_size) return encode_qwen3vl(px, width, height, stop);
  const VisionConfig& c = config_;
  if (width != c.image_size || height != c.image_size)
    throw std::invalid_argument("encode_preprocessed: this encoder takes " + std::to_string(c.image_size) + "x" +
                                std::to_string(c.image_size) + " images, not " + std::to_string(width) + "x" +
                                std::to_string(height));
  const int S = c.image_size, p = c.patch_size, side = c.patches_per_side(), N = side * side;
  const int H = c.hidden_size, heads = c.num_heads;
  if (px.size() != std::size_t(S) * std::size_t(S) * 3)
    throw std::invalid_argument("encode_preprocessed: expected " + std::to_string(S) + "x" + std::to_string(S) +
                                "x3 floats, got " + std::to_string(px.size()));
  kernels::Backend& b = *backend_;
  const Weights& w = *w_;
  // Patches as rows of (c, ky, kx), the convolution's weight order.
  const int K = 3 * p * p;
  std::vector<float> patches(std::size_t(N) * std::size_t(K));
  for (int py = 0; py < side; ++py)
    for (int pxi = 0; pxi < side; ++pxi) {
      float* row = patches.data() + std::size_t(py * side + pxi) * std::size_t(K);
      for (int ch = 0; ch < 3; ++ch)
        for (int ky = 0; ky < p; ++ky)
          for (int kx = 0; kx < p; ++kx)
            row[(ch * p + ky) * p + kx] =
                px[(std::size_t(py * p + ky) * std::size_t(S) + std::size_t(pxi * p + kx)) * 3 + std::size_t(ch)];
    }
  std::vector<float> x(std::size_t(N) * std::size_t(H)), h(x.size()), qkv(x.size() * 3), att(x.size());
  b.linear(x.data(), patches.data(), *w.patch, N);
  add_bias(x.data(), w.patch_b, N);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += w.pos[i];

  std::vector<float> ff(std::size_t(N) * std::size_t(c.intermediate_size));
  vit::Attention attention;
  for (const Layer& L : w.layers) {
    if (stop && stop()) throw VisionEncodeStopped();
    h = x;
    parallel_rows(N, threads_, [&](int t0, int t1) {
      layer_norm(h.data() + std::size_t(t0) * std::size_t(H), L.ln1_w.data(), L.ln1_b.data(), t1 - t0, H, c.eps);
    });
    b.linear(qkv.data(), h.data(), *L.qkv, N);
    add_bias(qkv.data(), L.qkv_b, N);
    attention.run(b, threads_, qkv.data(), att.data(), N, H, heads);
    b.linear(h.data(), att.data(), *L.out, N);
    add_bias(h.data(), L.out_b, N);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += h[i];
    h = x;
    parallel_rows(N, threads_, [&](int t0, int t1) {
      layer_norm(h.data() + std::size_t(t0) * std::size_t(H), L.ln2_w.data(), L.ln2_b.data(), t1 - t0, H, c.eps);
    });
    b.linear(ff.data(), h.data(), *L.up, N);
    add_bias(ff.data(), L.up_b, N);
    vit::activate_rows(b, ff.data(), N, c.intermediate_size, c.activation, threads_);
    b.linear(h.data(), ff.data(), *L.down, N);
    add_bias(h.data(), L.down_b, N);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += h[i];
  }
  layer_norm(x.data(), w.post_ln_w.data(), w.post_ln_b.data(), N, H, c.eps);

  // Average pooling merge x merge over the patch grid, cells row-major.
  const int m = c.merge, cells = side / m, T = cells * cells;
  std::vector<float> pooled(std::size_t(T) * std::size_t(H), 0.0f);
  for (int cy = 0; cy < cells; ++cy)
    for (int cx = 0; cx < cells; ++cx) {
      float* dst = pooled.data() + std::size_t(cy * cells + cx) * std::size_t(H);
      for (int dy = 0; dy < m; ++dy)
        for (int dx = 0; dx < m; ++dx) {
          const float* src = x.data() + std::size_t((cy * m + dy) * side + cx * m + dx) * std::size_t(H);
          for (int i = 0; i < H; ++i) dst[i] += src[i];
        }
      for (int i = 0; i < H; ++i) dst[i] /= float(m * m);
    }
  // RMSNorm with the soft embedding norm, then the projection to the text model's width.
  for (int t = 0; t < T; ++t) {
    float* r = pooled.data() + std::size_t(t) * std::size_t(H);
    double ss = 0;
    for (int i = 0; i < H; ++i) ss += double(r[i]) * r[i];
    const float inv = float(1.0 / std::sqrt(ss / H + c.eps));
    for (int i = 0; i < H; ++i) r[i] = r[i] * inv * w.soft_norm[std::size_t(i)];
  }
  ImageEmbeddings out;
  out.num_tokens = T;
  out.width = c.text_hidden_size;
  out.data.resize(std::size_t(T) * std::size_t(out.width));
  b.linear(out.data.data(), pooled.data(), *w.proj, T);
  return out;
}

}  // namespace pagedchat
