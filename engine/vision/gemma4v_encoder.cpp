// Gemma 4's vision encoder (projector type gemma4v): loader and forward.
//
// What it computes, for a fitted image of W x H pixels (multiples of patch p * pooling kernel k):
//   patches   PX = W / p by PY = H / p, row-major; each a (c, ky, kx) row of the pixels scaled to
//             [-1, 1] (2 x - 1 of the [0, 1] pixel: transformers' Gemma4VisionPatchEmbedder does it
//             in the model, the processor only rescales) through the patch projection (no bias);
//   positions + x_table[column] + y_table[row] (v.position_embd.weight holds both tables);
//   blocks    h = RMSNorm(x)·ln1; q, k, v = linear(h); q and k RMSNormed per head with their
//             weights, v per head without; 2-D RoPE on q and k (below); attention without a mask
//             and with scale 1; x += RMSNorm(o(att))·attn_post_norm; h = RMSNorm(x)·ln2;
//             x += RMSNorm(down(gelu_tanh(gate(h)) * up(h)))·ffn_post_norm; x *= out_scale when
//             the block has one; each linear clamps its input and output where the file says
//             (Gemma4ClippableLinear);
//   2-D RoPE  the first half of each head turns by the patch's column, the second by its row,
//             each half NEOX-style: pair (j, j + d/4) at angle pos · theta^(-4j/d), theta 100;
//   pooling   the mean of each k x k cell of patches, row-major over the PX/k x PY/k cells, times
//             sqrt(hidden); then (x - std_bias) · std_scale when the file has them, a weightless
//             RMSNorm, and mm.input_projection to the text model's width.
// Sources: transformers modeling_gemma4.py (Gemma4VisionModel, Gemma4VisionPatchEmbedder,
// Gemma4VisionAttention, apply_multidimensional_rope, Gemma4VisionEncoderLayer,
// Gemma4VisionPooler, Gemma4MultimodalEmbedder, Gemma4ClippableLinear) and
// image_processing_pil_gemma4.py (get_aspect_ratio_preserving_size), read, not copied; the GGUF
// names and defaults (pooling kernel 3, RoPE base 100) as ik_llama.cpp's examples/mtmd/clip.cpp
// (build_gemma4) reads them. Where ik differs from transformers (it clamps only the projection;
// its image sizes lie between 252 and 280 tokens), this follows transformers:
// tests/data/vision/gemma4/README.md measures the differences.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/vision/vision_weights.h"
#include "engine/vision/vit_ops.h"

namespace pagedchat {

using vit::fail;

namespace {

constexpr int kGemma4DefaultMaxTokens = 280;  // transformers Gemma4ImageProcessor.max_soft_tokens

/// The scalar tensor `name` (one finite float), or `fallback` when the file has none.
float scalar_or(const GgufFile& f, const std::string& path, const std::string& name, float fallback) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) return fallback;
  if (t->n_elements != 1 || !can_dequantize(t->type))
    fail(path, "tensor '" + name + "' must hold one number (a clamp bound)");
  float v = 0;
  dequantize(t->type, f.tensor_data(*t), &v, 1);
  if (std::isnan(v)) fail(path, "tensor '" + name + "' is not a number");
  return v;
}

/// RMSNorm of T rows of n floats in place with `w` (null: none), as transformers' Gemma4RMSNorm.
void rms_rows(kernels::Backend& b, float* x, const std::vector<float>& w, int T, int n, float eps) {
  b.rms_norm_heads(x, n, w.empty() ? nullptr : w.data(), T, 1, n, eps);
}

}  // namespace

void VisionEncoder::open_gemma4v(const GgufFile& f, const VisionOptions& options) {
  VisionConfig& c = config_;
  const std::string& path = path_;
  kernels::Backend& b = *backend_;
  vit::TensorSource src(f, path);
  g4_ = std::make_unique<Gemma4Weights>();
  Gemma4Weights& w = *g4_;
  std::size_t& bytes = w_->bytes;
  c.dynamic_size = true;
  c.size_rule = VisionConfig::SizeRule::kPatchBudget;
  // transformers' hidden_activation gelu_pytorch_tanh. llama.cpp's converter writes no
  // clip.use_gelu for Gemma 4, so ik_llama.cpp runs its GELU-quick default here (≈5e-2 off).
  c.activation = VisionConfig::Activation::kGeluTanh;
  c.merge = 3;
  if (f.find("clip.vision.projector.scale_factor")) {
    const std::optional<int64_t> m = f.get_int("clip.vision.projector.scale_factor");
    if (!m || *m < 1 || *m > 16) fail(path, "clip.vision.projector.scale_factor must be 1..16");
    c.merge = int(*m);
  }
  const int p = c.patch_size, factor = p * c.merge, heads = c.num_heads, hd = c.hidden_size / heads;
  if (hd % 4 != 0)
    fail(path, "the head size " + std::to_string(hd) + " is not a multiple of 4 (the 2-D RoPE turns pairs per axis)");
  const int max_tokens = options.max_tokens > 0 ? options.max_tokens : kGemma4DefaultMaxTokens;
  c.max_pixels = int64_t(max_tokens) * factor * factor;
  c.min_pixels = 0;
  c.image_begin = "<|image>";
  c.image_end = "<image|>";
  // The larger Gemma 4 models attend among an image's tokens both ways; the engine sets this from
  // the text model (LLMEngine::Impl::load_vision).
  c.bidirectional = true;
  c.window_spans_image = true;

  const uint64_t H = uint64_t(c.hidden_size), HD = uint64_t(hd);
  {
    const GgufTensorInfo& t = src.info("v.patch_embd.weight", {uint64_t(p), uint64_t(p), 3, H});
    const std::optional<kernels::DType> dt = dtype_of(t.type);
    if (!dt || (*dt != kernels::DType::kF32 && *dt != kernels::DType::kF16 && *dt != kernels::DType::kBF16))
      fail(path, "tensor 'v.patch_embd.weight' must be F32, F16 or BF16");
    if (!vit::finite_floats(t.type, f.tensor_data(t), t.n_elements))
      fail(path, "tensor 'v.patch_embd.weight' holds a value that is not finite");
    kernels::WeightPart part{f.tensor_data(t), c.hidden_size, *dt, *dt};
    w.patch = b.pack_weights(std::span<const kernels::WeightPart>(&part, 1), 3 * p * p);
    bytes += w.patch->bytes;
  }
  if (src.has("v.patch_embd.bias")) w.patch_b = src.floats("v.patch_embd.bias", {H});
  {
    // Two tables of pos_size rows (x, then y): ggml ne {hidden, pos_size, 2}.
    const GgufTensorInfo* t = f.find_tensor("v.position_embd.weight");
    if (!t || t->ne.size() < 3 || t->ne[1] < 1 || t->ne[1] > (1u << 20))
      fail(path, "tensor 'v.position_embd.weight' must hold two position tables ([hidden, positions, 2])");
    w.pos_size = int(t->ne[1]);
    const std::vector<float> both = src.floats("v.position_embd.weight", {H, t->ne[1], 2});
    const std::size_t half = both.size() / 2;
    w.pos_x.assign(both.begin(), both.begin() + std::ptrdiff_t(half));
    w.pos_y.assign(both.begin() + std::ptrdiff_t(half), both.end());
    bytes += both.size() * sizeof(float);
  }
  if (src.has("v.pre_ln.weight")) fail(path, "a pre-encoder norm (v.pre_ln) is not expected for gemma4v");
  // A linear `name` ([rows, k]) with its optional bias and clamps.
  auto linear = [&](const std::string& name, int rows, int k) {
    ClampedLinear l;
    l.w = src.matrix(b, name + ".weight", rows, k, bytes);
    if (src.has(name + ".bias")) l.bias = src.floats(name + ".bias", {uint64_t(rows)});
    l.in_lo = scalar_or(f, path, name + ".input_min", -HUGE_VALF);
    l.in_hi = scalar_or(f, path, name + ".input_max", HUGE_VALF);
    l.out_lo = scalar_or(f, path, name + ".output_min", -HUGE_VALF);
    l.out_hi = scalar_or(f, path, name + ".output_max", HUGE_VALF);
    if (!(l.in_lo <= l.in_hi) || !(l.out_lo <= l.out_hi))
      fail(path, "the clamp bounds of '" + name + "' are empty (min above max)");
    return l;
  };
  const int Hi = c.hidden_size, Fi = c.intermediate_size;
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string pre = "v.blk." + std::to_string(l) + ".";
    Gemma4Layer L;
    L.ln1 = src.floats(pre + "ln1.weight", {H});
    L.ln2 = src.floats(pre + "ln2.weight", {H});
    L.q_norm = src.floats(pre + "attn_q_norm.weight", {HD});
    L.k_norm = src.floats(pre + "attn_k_norm.weight", {HD});
    L.attn_post_norm = src.floats(pre + "attn_post_norm.weight", {H});
    L.ffn_post_norm = src.floats(pre + "ffn_post_norm.weight", {H});
    if (src.has(pre + "out_scale.weight")) L.out_scale = src.floats(pre + "out_scale.weight", {H});
    L.q = linear(pre + "attn_q", Hi, Hi);
    L.k = linear(pre + "attn_k", Hi, Hi);
    L.v = linear(pre + "attn_v", Hi, Hi);
    L.o = linear(pre + "attn_out", Hi, Hi);
    L.gate = linear(pre + "ffn_gate", Fi, Hi);
    L.up = linear(pre + "ffn_up", Fi, Hi);
    L.down = linear(pre + "ffn_down", Hi, Fi);
    bytes += (L.ln1.size() * 4 + L.q_norm.size() * 2 + L.out_scale.size()) * sizeof(float);
    w.layers.push_back(std::move(L));
  }
  if (src.has("v.blk." + std::to_string(c.num_layers) + ".ln1.weight"))
    fail(path, "the file has more encoder blocks than clip.vision.block_count " + std::to_string(c.num_layers));
  if (src.has("v.post_ln.weight")) w.post_ln = src.floats("v.post_ln.weight", {H});
  if (src.has("v.std_bias") != src.has("v.std_scale"))
    fail(path, "the file has one of v.std_bias and v.std_scale without the other");
  if (src.has("v.std_bias")) {
    w.std_bias = src.floats("v.std_bias", {H});
    w.std_scale = src.floats("v.std_scale", {H});
  }
  {
    // mm.input_projection: ggml ne {vision hidden, text hidden} (the other way round from gemma3's).
    const GgufTensorInfo* t = f.find_tensor("mm.input_projection.weight");
    if (!t || t->ne.size() < 2 || t->ne[0] != H || t->ne[1] < 1 || t->ne[1] > (1u << 17))
      fail(path, "tensor 'mm.input_projection.weight' is missing or misshaped (expected [" + std::to_string(H) +
                     ", text hidden])");
    c.text_hidden_size = int(t->ne[1]);
    w.proj = linear("mm.input_projection", c.text_hidden_size, Hi);
  }
}

std::pair<int, int> VisionEncoder::fit_size_gemma4v(int width, int height) const {
  const VisionConfig& c = config_;
  if (width < 1 || height < 1)
    throw std::invalid_argument("an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " pixels has no size");
  // transformers get_aspect_ratio_preserving_size, in the same float64 steps.
  const int side = c.patch_size * c.merge;
  const double factor = std::sqrt(double(c.max_pixels) / (double(height) * double(width)));
  int h = int(std::floor(factor * height / side)) * side;
  int w = int(std::floor(factor * width / side)) * side;
  const int64_t max_patches = c.max_pixels / (int64_t(c.patch_size) * c.patch_size);
  const int64_t max_side = (max_patches / (int64_t(c.merge) * c.merge)) * side;
  if (h == 0 && w == 0)
    throw std::invalid_argument("an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " pixels fits no " + std::to_string(side) + "-pixel cell in its token budget");
  if (h == 0) {
    h = side;
    w = int(std::min<int64_t>(int64_t(width / height) * side, max_side));
  } else if (w == 0) {
    w = side;
    h = int(std::min<int64_t>(int64_t(height / width) * side, max_side));
  }
  // The learned position tables bound the patches a side (10240 in Gemma 4's projectors).
  if (std::max(w, h) / c.patch_size > g4_->pos_size)
    throw std::invalid_argument("an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " pixels would take " + std::to_string(std::max(w, h) / c.patch_size) +
                                " patches a side at this token budget, more than the projector's " +
                                std::to_string(g4_->pos_size) + " positions (it is too narrow)");
  return {w, h};
}

ImageGrid VisionEncoder::grid_gemma4v(int w, int h) const {
  const VisionConfig& c = config_;
  const int side = c.patch_size * c.merge;
  if (w < side || h < side || w % side != 0 || h % side != 0 || int64_t(w) * h > c.max_pixels ||
      w / c.patch_size > g4_->pos_size || h / c.patch_size > g4_->pos_size)
    throw std::invalid_argument("an image of " + std::to_string(w) + "x" + std::to_string(h) +
                                " pixels is not at a size the encoder takes (fit() it first; at most " +
                                std::to_string(g4_->pos_size) + " patches a side)");
  return {(w / side) * (h / side), w / side, h / side};
}

ImageEmbeddings VisionEncoder::encode_gemma4v(const std::vector<float>& px, int width, int height,
                                              const VisionStopCheck& stop) {
  const VisionConfig& c = config_;
  const int p = c.patch_size, k = c.merge;
  if (!takes_size(width, height) || px.size() != std::size_t(width) * std::size_t(height) * 3)
    throw std::invalid_argument("encode_preprocessed: " + std::to_string(width) + "x" + std::to_string(height) +
                                " is not a size this encoder takes (multiples of " + std::to_string(p * k) + ") or " +
                                std::to_string(px.size()) + " floats are not its pixels");
  kernels::Backend& b = *backend_;
  const Gemma4Weights& w = *g4_;
  const int PX = width / p, PY = height / p, N = PX * PY, H = c.hidden_size, heads = c.num_heads, hd = H / heads;
  const int F = c.intermediate_size, D = c.text_hidden_size;
  const std::size_t NH = std::size_t(N) * std::size_t(H);

  // Patches, row-major, as (c, ky, kx) rows of 2 x - 1.
  const int K = 3 * p * p;
  std::vector<float> patches(std::size_t(N) * std::size_t(K));
  vit::parallel_rows(N, threads_, [&](int s0, int s1) {
    for (int s = s0; s < s1; ++s) {
      float* r = patches.data() + std::size_t(s) * std::size_t(K);
      const int py = s / PX, pxi = s % PX;
      for (int ch = 0; ch < 3; ++ch)
        for (int ky = 0; ky < p; ++ky)
          for (int kx = 0; kx < p; ++kx)
            r[(ch * p + ky) * p + kx] =
                2.0f * px[(std::size_t(py * p + ky) * std::size_t(width) + std::size_t(pxi * p + kx)) * 3 +
                          std::size_t(ch)] -
                1.0f;
    }
  });
  std::vector<float> x(NH);
  b.linear(x.data(), patches.data(), *w.patch, N);
  patches = {};
  if (!w.patch_b.empty()) vit::add_bias(x.data(), w.patch_b, N);
  vit::parallel_rows(N, threads_, [&](int s0, int s1) {
    for (int s = s0; s < s1; ++s) {
      float* r = x.data() + std::size_t(s) * std::size_t(H);
      const float* ex = w.pos_x.data() + std::size_t(s % PX) * std::size_t(H);
      const float* ey = w.pos_y.data() + std::size_t(s / PX) * std::size_t(H);
      for (int i = 0; i < H; ++i) r[i] += ex[i] + ey[i];
    }
  });

  // 2-D RoPE: per patch, cos/sin of the quarter-head frequencies at its column and at its row.
  const int half = hd / 2, quarter = hd / 4;
  std::vector<float> cosv(std::size_t(N) * std::size_t(half)), sinv(cosv.size());
  for (int s = 0; s < N; ++s)
    for (int j = 0; j < half; ++j) {
      const int i = j % quarter;
      const double inv = std::pow(double(w.rope_theta), -2.0 * i / double(half));
      const double a = (j < quarter ? s % PX : s / PX) * inv;
      cosv[std::size_t(s) * std::size_t(half) + std::size_t(j)] = float(std::cos(a));
      sinv[std::size_t(s) * std::size_t(half) + std::size_t(j)] = float(std::sin(a));
    }
  auto rope = [&](float* row, int s) {
    const float* cs = cosv.data() + std::size_t(s) * std::size_t(half);
    const float* sn = sinv.data() + std::size_t(s) * std::size_t(half);
    for (int hh = 0; hh < heads; ++hh)
      for (int part = 0; part < 2; ++part) {
        float* v = row + std::size_t(hh * hd + part * half);
        const float* pc = cs + part * quarter;
        const float* ps = sn + part * quarter;
        for (int j = 0; j < quarter; ++j) {
          const float a = v[j], bb = v[j + quarter];
          v[j] = a * pc[j] - bb * ps[j];
          v[j + quarter] = bb * pc[j] + a * ps[j];
        }
      }
  };

  // A clamped linear of T rows: in (scratch, clamped when asked) -> out.
  std::vector<float> clamped;
  auto apply = [&](const ClampedLinear& l, float* out, const float* in, int T, int k_in, int n_out) {
    const float* src = in;
    if (l.clamps_input()) {
      clamped.assign(in, in + std::size_t(T) * std::size_t(k_in));
      for (float& v : clamped) v = std::clamp(v, l.in_lo, l.in_hi);
      src = clamped.data();
    }
    b.linear(out, src, *l.w, T);
    if (!l.bias.empty()) vit::add_bias(out, l.bias, T);
    if (l.clamps_output())
      for (std::size_t i = 0; i < std::size_t(T) * std::size_t(n_out); ++i)
        out[i] = std::clamp(out[i], l.out_lo, l.out_hi);
  };

  std::vector<float> h(NH), q(NH), kk(NH), v(NH), att(NH);
  std::vector<float> gate(std::size_t(N) * std::size_t(F)), up(gate.size());
  vit::Attention attention;
  for (const Gemma4Layer& L : w.layers) {
    if (stop && stop()) throw VisionEncodeStopped();
    h = x;
    rms_rows(b, h.data(), L.ln1, N, H, c.eps);
    apply(L.q, q.data(), h.data(), N, H, H);
    apply(L.k, kk.data(), h.data(), N, H, H);
    apply(L.v, v.data(), h.data(), N, H, H);
    b.rms_norm_heads(q.data(), H, L.q_norm.data(), N, heads, hd, c.eps);
    b.rms_norm_heads(kk.data(), H, L.k_norm.data(), N, heads, hd, c.eps);
    b.rms_norm_heads(v.data(), H, nullptr, N, heads, hd, c.eps);
    vit::parallel_rows(N, threads_, [&](int s0, int s1) {
      for (int s = s0; s < s1; ++s) {
        rope(q.data() + std::size_t(s) * std::size_t(H), s);
        rope(kk.data() + std::size_t(s) * std::size_t(H), s);
      }
    });
    attention.run(b, threads_, q.data(), kk.data(), v.data(), H, att.data(), N, H, heads, 1.0f);
    apply(L.o, h.data(), att.data(), N, H, H);
    rms_rows(b, h.data(), L.attn_post_norm, N, H, c.eps);
    b.add(x.data(), h.data(), int64_t(NH));
    h = x;
    rms_rows(b, h.data(), L.ln2, N, H, c.eps);
    apply(L.gate, gate.data(), h.data(), N, H, F);
    apply(L.up, up.data(), h.data(), N, H, F);
    if (c.activation == VisionConfig::Activation::kGeluTanh) {
      b.gelu_tanh_mul(gate.data(), up.data(), F, N, F);
    } else {
      vit::activate(gate.data(), gate.size(), c.activation, threads_);
      for (std::size_t i = 0; i < gate.size(); ++i) gate[i] *= up[i];
    }
    apply(L.down, h.data(), gate.data(), N, F, H);
    rms_rows(b, h.data(), L.ffn_post_norm, N, H, c.eps);
    b.add(x.data(), h.data(), int64_t(NH));
    if (!L.out_scale.empty())
      for (int s = 0; s < N; ++s)
        for (int i = 0; i < H; ++i) x[std::size_t(s) * std::size_t(H) + std::size_t(i)] *= L.out_scale[std::size_t(i)];
  }
  if (!w.post_ln.empty()) rms_rows(b, x.data(), w.post_ln, N, H, c.eps);

  // Average pooling k x k, cells row-major, times sqrt(hidden); standardisation; weightless RMSNorm.
  const int CX = PX / k, CY = PY / k, T = CX * CY;
  std::vector<float> pooled(std::size_t(T) * std::size_t(H), 0.0f);
  const float scale = std::sqrt(float(H)) / float(k * k);
  for (int cy = 0; cy < CY; ++cy)
    for (int cx = 0; cx < CX; ++cx) {
      float* dst = pooled.data() + std::size_t(cy * CX + cx) * std::size_t(H);
      for (int dy = 0; dy < k; ++dy)
        for (int dx = 0; dx < k; ++dx) {
          const float* s = x.data() + std::size_t((cy * k + dy) * PX + cx * k + dx) * std::size_t(H);
          for (int i = 0; i < H; ++i) dst[i] += s[i];
        }
      for (int i = 0; i < H; ++i) dst[i] *= scale;
    }
  if (!w.std_bias.empty())
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < H; ++i) {
        float& e = pooled[std::size_t(t) * std::size_t(H) + std::size_t(i)];
        e = (e - w.std_bias[std::size_t(i)]) * w.std_scale[std::size_t(i)];
      }
  rms_rows(b, pooled.data(), {}, T, H, c.eps);
  ImageEmbeddings out;
  out.num_tokens = T;
  out.width = D;
  out.data.resize(std::size_t(T) * std::size_t(D));
  apply(w.proj, out.data.data(), pooled.data(), T, H, D);
  return out;
}

}  // namespace pagedchat
