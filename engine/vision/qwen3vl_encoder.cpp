// Qwen3-VL's vision encoder (projector type qwen3vl_merger): loader and forward.
//
// What it computes, for a fitted image of W x H pixels (multiples of patch p * merge m):
//   patches   PX = W / p by PY = H / p, in merge-block order: sequence index s is patch
//             (m·by + dy, m·bx + dx) for blocks (by, bx) row-major, inside a block (dy, dx)
//             row-major; each patch is a (c, ky, kx) row through the patch convolution (Qwen3-VL's
//             Conv3d over the image repeated as 2 frames = the sum of its two temporal kernels,
//             v.patch_embd.weight + v.patch_embd.weight.1) plus its bias;
//   positions the learned grid (n x n) interpolated bilinearly to PY x PX with aligned corners
//             (transformers Qwen3VLVisionModel.fast_pos_embed_interpolate: linspace(0, n - 1, PY)
//             and (0, n - 1, PX), floor / floor + 1 clipped, four weights), added per patch;
//   2-D RoPE  per head of d dims, pair (j, j + d/2): angle y · 10000^(-4j/d) for j < d/4, x ·
//             10000^(-4(j - d/4)/d) for j >= d/4 (VisionRotaryEmbedding over d/2, rot_pos_emb
//             with (row, col) of each patch), on q and k;
//   blocks    x += attn_out(attn(LN1(x))), x += ffn_down(act(ffn_up(LN2(x)))), fused qkv with
//             bias, no mask, scale 1/sqrt(d); act from clip.use_gelu (GELU-tanh: Qwen3-VL's
//             gelu_pytorch_tanh);
//   deepstack after block l when v.deepstack.l.* exist: m² consecutive patches concatenated,
//             LayerNorm over that width, fc1, GELU (exact erf: nn.GELU), fc2 — one feature per
//             merged token (Qwen3VLVisionPatchMerger with use_postshuffle_norm);
//   merger    v.post_ln per patch, m² patches concatenated, mm.0, GELU (erf), mm.2.
// Output per merged token (row-major over the PX/m x PY/m token grid): [merger | deepstack
// features in block order], the text model's hidden size each.
// Sources: transformers modeling_qwen3_vl.py (Qwen3VLVisionModel, Qwen3VLVisionBlock,
// Qwen3VLVisionPatchMerger) and image_processing_qwen2_vl.py (smart_resize), read, not copied;
// the GGUF names as llama.cpp's converter writes them and ik_llama.cpp's examples/mtmd/clip.cpp
// (build_qwen3vl) reads them. Where ik differs from transformers (its position grid is resized
// nearest-neighbour, its mergers use GELU-tanh, pixels rounded to F16 in its convolution), this
// follows transformers: tests/data/vision/qwen3vl/README.md measures the differences.
#include <cmath>
#include <stdexcept>

#include "engine/vision/vision_weights.h"
#include "engine/vision/vit_ops.h"

namespace pagedchat {

using vit::fail;

namespace {

constexpr int kDefaultMinTokens = 64, kDefaultMaxTokens = 4096;

}  // namespace

void VisionEncoder::open_qwen3vl(const GgufFile& f, const VisionOptions& options) {
  VisionConfig& c = config_;
  const std::string& path = path_;
  Weights& w = *w_;
  kernels::Backend& b = *backend_;
  vit::TensorSource src(f, path);
  c.dynamic_size = true;
  c.merge = 2;
  if (f.find("clip.vision.spatial_merge_size")) {
    const std::optional<int64_t> m = f.get_int("clip.vision.spatial_merge_size");
    if (!m || *m < 1 || *m > 8) fail(path, "clip.vision.spatial_merge_size must be 1..8");
    c.merge = int(*m);
  }
  const int p = c.patch_size, m = c.merge, factor = p * m;
  const uint64_t H = uint64_t(c.hidden_size), F = uint64_t(c.intermediate_size), MH = H * uint64_t(m * m);
  // Pixel limits: the options, else the file's keys, else the defaults (in tokens of factor²).
  auto limit = [&](int tokens, const char* key, int fallback) -> int64_t {
    if (tokens > 0) return int64_t(tokens) * factor * factor;
    if (const std::optional<int64_t> v = f.get_int(key)) {
      if (*v < int64_t(factor) * factor || *v > (int64_t(1) << 30))
        fail(path, std::string("key '") + key + "' is " + std::to_string(*v) + ", outside " +
                       std::to_string(factor * factor) + ".." + std::to_string(int64_t(1) << 30));
      return *v;
    }
    return int64_t(fallback) * factor * factor;
  };
  c.min_pixels = limit(options.min_tokens, "clip.vision.image_min_pixels", kDefaultMinTokens);
  c.max_pixels = limit(options.max_tokens, "clip.vision.image_max_pixels", kDefaultMaxTokens);
  if (c.min_pixels > c.max_pixels) {
    if (options.min_tokens > 0 || options.max_tokens > 0)
      throw std::invalid_argument("the fewest tokens an image becomes (--image-min-tokens, " +
                                  std::to_string(c.min_pixels / (factor * factor)) + ") is above the most (" +
                                  "--image-max-tokens, " + std::to_string(c.max_pixels / (factor * factor)) + ")");
    fail(path, "the smallest image (" + std::to_string(c.min_pixels) + " pixels) is larger than the largest (" +
                   std::to_string(c.max_pixels) + ")");
  }
  c.image_begin = "<|vision_start|>";
  c.image_end = "<|vision_end|>";
  c.bidirectional = false;

  // The patch convolution: the two temporal kernels summed ([hidden, 3 p p], float32).
  {
    std::vector<float> k0 = src.floats("v.patch_embd.weight", {uint64_t(p), uint64_t(p), 3, H});
    if (src.has("v.patch_embd.weight.1")) {
      const std::vector<float> k1 = src.floats("v.patch_embd.weight.1", {uint64_t(p), uint64_t(p), 3, H});
      for (std::size_t i = 0; i < k0.size(); ++i) k0[i] += k1[i];
    } else {
      for (float& v : k0) v *= 2.0f;  // one kernel for both frames (as transformers' Conv3d with kt = 2)
    }
    kernels::WeightPart part{k0.data(), c.hidden_size, kernels::DType::kF32, kernels::DType::kF32};
    w.patch = b.pack_weights(std::span<const kernels::WeightPart>(&part, 1), 3 * p * p);
    w.bytes += w.patch->bytes;
  }
  w.patch_b = src.has("v.patch_embd.bias") ? src.floats("v.patch_embd.bias", {H}) : std::vector<float>(H, 0.0f);
  {
    const GgufTensorInfo* t = f.find_tensor("v.position_embd.weight");
    if (!t || t->ne.size() < 2) fail(path, "tensor 'v.position_embd.weight' is missing");
    const int side = int(std::lround(std::sqrt(double(t->ne[1]))));
    if (side < 1 || uint64_t(side) * uint64_t(side) != t->ne[1])
      fail(path, "tensor 'v.position_embd.weight' has " + std::to_string(t->ne[1]) + " positions, not a square grid");
    w.pos_side = side;
    w.pos = src.floats("v.position_embd.weight", {H, t->ne[1]});
  }
  if (src.has("v.pre_ln.weight")) fail(path, "a pre-encoder LayerNorm (v.pre_ln) is not expected for qwen3vl_merger");
  auto merger = [&](const std::string& prefix, const std::string& norm, int block, uint64_t norm_width) {
    Merger mg;
    mg.block = block;
    mg.norm_w = src.floats(norm + ".weight", {norm_width});
    mg.norm_b = src.floats(norm + ".bias", {norm_width});
    mg.fc1 = src.matrix(b, prefix + (block >= 0 ? "fc1" : "0") + ".weight", int(MH), int(MH), w.bytes);
    mg.fc1_b = src.floats(prefix + (block >= 0 ? "fc1" : "0") + ".bias", {MH});
    mg.fc2 = src.matrix(b, prefix + (block >= 0 ? "fc2" : "2") + ".weight", c.text_hidden_size, int(MH), w.bytes);
    mg.fc2_b = src.floats(prefix + (block >= 0 ? "fc2" : "2") + ".bias", {uint64_t(c.text_hidden_size)});
    return mg;
  };
  {
    const GgufTensorInfo* t = f.find_tensor("mm.2.weight");
    if (!t || t->ne.size() < 2 || t->ne[1] < 1 || t->ne[1] > (1u << 17))
      fail(path, "tensor 'mm.2.weight' (the merger's output projection) is missing or misshaped");
    c.text_hidden_size = int(t->ne[1]);
  }
  const GgufValue* flags = f.get_array("clip.vision.is_deepstack_layers", GgufType::kBool);
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string pre = "v.blk." + std::to_string(l) + ".";
    Layer L;
    L.ln1_w = src.floats(pre + "ln1.weight", {H});
    L.ln1_b = src.floats(pre + "ln1.bias", {H});
    L.ln2_w = src.floats(pre + "ln2.weight", {H});
    L.ln2_b = src.floats(pre + "ln2.bias", {H});
    L.qkv = src.matrix(b, pre + "attn_qkv.weight", 3 * c.hidden_size, c.hidden_size, w.bytes);
    L.qkv_b = src.floats(pre + "attn_qkv.bias", {3 * H});
    L.out = src.matrix(b, pre + "attn_out.weight", c.hidden_size, c.hidden_size, w.bytes);
    L.out_b = src.floats(pre + "attn_out.bias", {H});
    L.up = src.matrix(b, pre + "ffn_up.weight", c.intermediate_size, c.hidden_size, w.bytes);
    L.up_b = src.floats(pre + "ffn_up.bias", {F});
    L.down = src.matrix(b, pre + "ffn_down.weight", c.hidden_size, c.intermediate_size, w.bytes);
    L.down_b = src.floats(pre + "ffn_down.bias", {H});
    w.layers.push_back(std::move(L));
    const std::string ds = "v.deepstack." + std::to_string(l) + ".";
    const bool has = src.has(ds + "fc1.weight");
    if (flags && std::size_t(l) < flags->uints.size() && (flags->uints[std::size_t(l)] != 0) != has)
      fail(path, "clip.vision.is_deepstack_layers says block " + std::to_string(l) + (has ? " has no" : " has a") +
                     " deepstack merger, but its tensors " + (has ? "are there" : "are missing"));
    if (has) w.deepstack.push_back(merger(ds, ds + "norm", l, MH));
  }
  if (src.has("v.blk." + std::to_string(c.num_layers) + ".ln1.weight"))
    fail(path, "the file has more encoder blocks than clip.vision.block_count " + std::to_string(c.num_layers));
  c.deepstack = int(w.deepstack.size());
  w.final_merger = merger("mm.", "v.post_ln", -1, H);
  w.bytes += (w.pos.size() + w.patch_b.size()) * sizeof(float);
}

std::pair<int, int> VisionEncoder::fit_size(int width, int height) const {
  const VisionConfig& c = config_;
  if (!c.dynamic_size) return {c.image_size, c.image_size};
  if (c.size_rule == VisionConfig::SizeRule::kPatchBudget) return fit_size_gemma4v(width, height);
  if (width < 1 || height < 1)
    throw std::invalid_argument("an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " pixels has no size");
  // A size this rule gives is its own fit (fit() of a fitted picture changes nothing, as a request's
  // picture is fitted once more when its prompt is laid out): whole merged patches, within the
  // limits — above max_pixels only when a side is one merged patch and cannot shrink. Rounding can
  // take a 199:1 picture past 200:1, so such a size skips transformers' limit on the sides.
  const int fi = c.patch_size * c.merge;
  const int64_t px = int64_t(width) * height;
  if (width % fi == 0 && height % fi == 0 && std::max(width, height) <= 256 * std::min(width, height) &&
      px >= c.min_pixels && (px <= c.max_pixels || std::min(width, height) == fi))
    return {width, height};
  if (double(std::max(width, height)) / std::min(width, height) > 200)
    throw std::invalid_argument("an image of " + std::to_string(width) + "x" + std::to_string(height) +
                                " pixels is too narrow: its sides differ by more than 200 times");
  // transformers smart_resize: Python's round is half to even, as nearbyint under the default
  // rounding mode.
  const double f = fi;
  double h = std::nearbyint(height / f) * f, w = std::nearbyint(width / f) * f;
  if (h * w > double(c.max_pixels)) {
    const double beta = std::sqrt(double(height) * width / double(c.max_pixels));
    h = std::max(f, std::floor(height / beta / f) * f);
    w = std::max(f, std::floor(width / beta / f) * f);
  } else if (h * w < double(c.min_pixels)) {
    const double beta = std::sqrt(double(c.min_pixels) / (double(height) * width));
    h = std::ceil(height * beta / f) * f;
    w = std::ceil(width * beta / f) * f;
    // Rounding up can pass max_pixels when the two limits are close (transformers then exceeds
    // it): scaled down again, so an image never takes more than the largest.
    if (h * w > double(c.max_pixels)) {
      const double down = std::sqrt(h * w / double(c.max_pixels));
      h = std::max(f, std::floor(h / down / f) * f);
      w = std::max(f, std::floor(w / down / f) * f);
    }
  }
  return {int(w), int(h)};
}

ImageGrid VisionEncoder::grid(const RgbImage& fitted) const {
  const VisionConfig& c = config_;
  const int w = fitted.width, h = fitted.height;
  if (!c.dynamic_size) {
    if (w != c.image_size || h != c.image_size)
      throw std::invalid_argument("an image of " + std::to_string(w) + "x" + std::to_string(h) +
                                  " pixels is not at the encoder's size (fit() it first)");
    return {c.tokens_per_image(), 0, 0};
  }
  if (c.size_rule == VisionConfig::SizeRule::kPatchBudget) return grid_gemma4v(w, h);
  // Any size fit() can give: whole merged patches, no more than max_pixels unless a side is one
  // merged patch (a narrow picture cannot shrink further: transformers' rule keeps it so).
  const int f = c.patch_size * c.merge;
  if (w < f || h < f || w % f != 0 || h % f != 0 || (int64_t(w) * h > c.max_pixels && std::min(w, h) > f) ||
      std::max(w, h) > 256 * std::min(w, h))
    throw std::invalid_argument("an image of " + std::to_string(w) + "x" + std::to_string(h) +
                                " pixels is not at a size the encoder takes (fit() it first)");
  return {(w / f) * (h / f), w / f, h / f};
}

ImageEmbeddings VisionEncoder::encode_qwen3vl(const std::vector<float>& px, int width, int height,
                                              const VisionStopCheck& stop) {
  const VisionConfig& c = config_;
  const int p = c.patch_size, m = c.merge, f = p * m;
  // The sizes grid() takes (any size fit() gives), and the pixels of one.
  if (!takes_size(width, height) || px.size() != std::size_t(width) * std::size_t(height) * 3)
    throw std::invalid_argument("encode_preprocessed: " + std::to_string(width) + "x" + std::to_string(height) +
                                " is not a size this encoder takes (multiples of " + std::to_string(f) + ") or " +
                                std::to_string(px.size()) + " floats are not its pixels");
  kernels::Backend& b = *backend_;
  const Weights& w = *w_;
  const int PX = width / p, PY = height / p, N = PX * PY, H = c.hidden_size, heads = c.num_heads, hd = H / heads;
  const int BX = PX / m, BY = PY / m, T = BX * BY, mm = m * m;
  // Patch (py, px) of sequence index s, in merge-block order.
  std::vector<int> row_of(static_cast<std::size_t>(N)), col_of(static_cast<std::size_t>(N));
  for (int by = 0, s = 0; by < BY; ++by)
    for (int bx = 0; bx < BX; ++bx)
      for (int dy = 0; dy < m; ++dy)
        for (int dx = 0; dx < m; ++dx, ++s) {
          row_of[std::size_t(s)] = by * m + dy;
          col_of[std::size_t(s)] = bx * m + dx;
        }
  const int K = 3 * p * p;
  std::vector<float> patches(std::size_t(N) * std::size_t(K));
  vit::parallel_rows(N, threads_, [&](int s0, int s1) {
    for (int s = s0; s < s1; ++s) {
      float* r = patches.data() + std::size_t(s) * std::size_t(K);
      const int py = row_of[std::size_t(s)], pxi = col_of[std::size_t(s)];
      for (int ch = 0; ch < 3; ++ch)
        for (int ky = 0; ky < p; ++ky)
          for (int kx = 0; kx < p; ++kx)
            r[(ch * p + ky) * p + kx] =
                px[(std::size_t(py * p + ky) * std::size_t(width) + std::size_t(pxi * p + kx)) * 3 + std::size_t(ch)];
    }
  });
  std::vector<float> x(std::size_t(N) * std::size_t(H)), h(x.size()), qkv(x.size() * 3), att(x.size());
  b.linear(x.data(), patches.data(), *w.patch, N);
  patches = {};
  vit::add_bias(x.data(), w.patch_b, N);
  // Learned positions, bilinear with aligned corners (float64 weights).
  {
    const int n = w.pos_side;
    auto axis = [n](int count, int i, int& lo, int& hi, double& frac) {
      const double v = count > 1 ? double(i) * (n - 1) / (count - 1) : 0.0;
      lo = int(std::floor(v));
      hi = std::min(lo + 1, n - 1);
      frac = v - lo;
    };
    vit::parallel_rows(N, threads_, [&](int s0, int s1) {
      for (int s = s0; s < s1; ++s) {
        int y0, y1, x0, x1;
        double dy, dx;
        axis(PY, row_of[std::size_t(s)], y0, y1, dy);
        axis(PX, col_of[std::size_t(s)], x0, x1, dx);
        const float w00 = float((1 - dy) * (1 - dx)), w01 = float((1 - dy) * dx), w10 = float(dy * (1 - dx)),
                    w11 = float(dy * dx);
        const float* e00 = w.pos.data() + std::size_t(y0 * n + x0) * std::size_t(H);
        const float* e01 = w.pos.data() + std::size_t(y0 * n + x1) * std::size_t(H);
        const float* e10 = w.pos.data() + std::size_t(y1 * n + x0) * std::size_t(H);
        const float* e11 = w.pos.data() + std::size_t(y1 * n + x1) * std::size_t(H);
        float* r = x.data() + std::size_t(s) * std::size_t(H);
        for (int i = 0; i < H; ++i) r[i] += w00 * e00[i] + w01 * e01[i] + w10 * e10[i] + w11 * e11[i];
      }
    });
  }
  // 2-D RoPE tables: cos/sin per patch and rotated pair.
  const int half = hd / 2, quarter = hd / 4;
  std::vector<float> cosv(std::size_t(N) * std::size_t(half)), sinv(cosv.size());
  for (int s = 0; s < N; ++s)
    for (int j = 0; j < half; ++j) {
      const int k = j < quarter ? j : j - quarter;
      const double inv = std::pow(10000.0, -2.0 * k / double(half));
      const double a = (j < quarter ? row_of[std::size_t(s)] : col_of[std::size_t(s)]) * inv;
      cosv[std::size_t(s) * std::size_t(half) + std::size_t(j)] = float(std::cos(a));
      sinv[std::size_t(s) * std::size_t(half) + std::size_t(j)] = float(std::sin(a));
    }
  auto rope = [&](float* row, int s) {
    const float* cs = cosv.data() + std::size_t(s) * std::size_t(half);
    const float* sn = sinv.data() + std::size_t(s) * std::size_t(half);
    for (int hh = 0; hh < heads; ++hh) {
      float* v = row + std::size_t(hh * hd);
      for (int j = 0; j < half; ++j) {
        const float a = v[j], bb = v[j + half];
        v[j] = a * cs[j] - bb * sn[j];
        v[j + half] = bb * cs[j] + a * sn[j];
      }
    }
  };

  ImageEmbeddings out;
  out.num_tokens = T;
  out.width = c.output_width();
  out.data.assign(std::size_t(T) * std::size_t(out.width), 0.0f);
  const int D = c.text_hidden_size, MH = H * mm;
  std::vector<float> merged(std::size_t(T) * std::size_t(MH)), mid(merged.size()), feat(std::size_t(T) * D);
  // A merger over `src` ([N, H] in merge-block order: T rows of MH): into column `column` of out.
  auto run_merger = [&](const Merger& mg, const float* src, int column) {
    std::copy_n(src, merged.size(), merged.begin());
    if (mg.block >= 0)
      vit::parallel_rows(T, threads_, [&](int t0, int t1) {
        vit::layer_norm(merged.data() + std::size_t(t0) * std::size_t(MH), mg.norm_w.data(), mg.norm_b.data(), t1 - t0,
                        MH, c.eps);
      });
    b.linear(mid.data(), merged.data(), *mg.fc1, T);
    vit::add_bias(mid.data(), mg.fc1_b, T);
    vit::activate(mid.data(), mid.size(), VisionConfig::Activation::kGeluErf, threads_);
    b.linear(feat.data(), mid.data(), *mg.fc2, T);
    vit::add_bias(feat.data(), mg.fc2_b, T);
    for (int t = 0; t < T; ++t)
      std::copy_n(feat.data() + std::size_t(t) * std::size_t(D), D,
                  out.data.data() + std::size_t(t) * std::size_t(out.width) + std::size_t(column * D));
  };

  std::vector<float> ff(std::size_t(N) * std::size_t(c.intermediate_size));
  vit::Attention attention;
  std::size_t next_deepstack = 0;
  for (int l = 0; l < int(w.layers.size()); ++l) {
    if (stop && stop()) throw VisionEncodeStopped();
    const Layer& L = w.layers[std::size_t(l)];
    h = x;
    vit::parallel_rows(N, threads_, [&](int t0, int t1) {
      vit::layer_norm(h.data() + std::size_t(t0) * std::size_t(H), L.ln1_w.data(), L.ln1_b.data(), t1 - t0, H, c.eps);
    });
    b.linear(qkv.data(), h.data(), *L.qkv, N);
    vit::add_bias(qkv.data(), L.qkv_b, N);
    vit::parallel_rows(N, threads_, [&](int s0, int s1) {
      for (int s = s0; s < s1; ++s) {
        float* r = qkv.data() + std::size_t(s) * std::size_t(3 * H);
        rope(r, s);      // q
        rope(r + H, s);  // k
      }
    });
    attention.run(b, threads_, qkv.data(), att.data(), N, H, heads);
    b.linear(h.data(), att.data(), *L.out, N);
    vit::add_bias(h.data(), L.out_b, N);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += h[i];
    h = x;
    vit::parallel_rows(N, threads_, [&](int t0, int t1) {
      vit::layer_norm(h.data() + std::size_t(t0) * std::size_t(H), L.ln2_w.data(), L.ln2_b.data(), t1 - t0, H, c.eps);
    });
    b.linear(ff.data(), h.data(), *L.up, N);
    vit::add_bias(ff.data(), L.up_b, N);
    vit::activate_rows(b, ff.data(), N, c.intermediate_size, c.activation, threads_);
    b.linear(h.data(), ff.data(), *L.down, N);
    vit::add_bias(h.data(), L.down_b, N);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += h[i];
    if (next_deepstack < w.deepstack.size() && w.deepstack[next_deepstack].block == l) {
      run_merger(w.deepstack[next_deepstack], x.data(), 1 + int(next_deepstack));
      ++next_deepstack;
    }
  }
  vit::parallel_rows(N, threads_, [&](int t0, int t1) {
    vit::layer_norm(x.data() + std::size_t(t0) * std::size_t(H), w.final_merger.norm_w.data(),
                    w.final_merger.norm_b.data(), t1 - t0, H, c.eps);
  });
  run_merger(w.final_merger, x.data(), 0);
  return out;
}

}  // namespace pagedchat
