#include "engine/loader/llama2c/llama2c_loader.h"

#include "engine/loader/load_util.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace pagedchat {
namespace {

struct Header {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};
constexpr std::size_t kHeaderBytes = 7 * sizeof(int32_t);

using load::kMaxDim;
using load::kMaxHeads;
using load::kMaxLayers;
using load::kMaxVocab;
constexpr int64_t kMaxSeqLen = 1 << 21;  // llama2.c's own checkpoints: 256 to 4096

std::string check_header(const Header& h) {
  auto bad = [](const char* name, int64_t v, int64_t lo, int64_t hi) {
    return std::string(name) + " " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]";
  };
  if (h.dim < 1 || h.dim > kMaxDim) return bad("dim", h.dim, 1, kMaxDim);
  if (h.hidden_dim < 1 || h.hidden_dim > 4 * kMaxDim) return bad("hidden_dim", h.hidden_dim, 1, 4 * kMaxDim);
  if (h.n_layers < 1 || h.n_layers > kMaxLayers) return bad("n_layers", h.n_layers, 1, kMaxLayers);
  if (h.n_heads < 1 || h.n_heads > kMaxHeads) return bad("n_heads", h.n_heads, 1, kMaxHeads);
  if (h.n_kv_heads < 1 || h.n_kv_heads > h.n_heads) return bad("n_kv_heads", h.n_kv_heads, 1, h.n_heads);
  if (h.vocab_size == 0 || h.vocab_size < -kMaxVocab || h.vocab_size > kMaxVocab)
    return bad("vocab_size", h.vocab_size, 1, kMaxVocab) + " (negative means an unshared classifier)";
  if (h.seq_len < 1 || h.seq_len > kMaxSeqLen) return bad("seq_len", h.seq_len, 1, kMaxSeqLen);
  if (h.dim % h.n_heads != 0)
    return "dim " + std::to_string(h.dim) + " is not a multiple of n_heads " + std::to_string(h.n_heads);
  if (h.n_heads % h.n_kv_heads != 0)
    return "n_heads " + std::to_string(h.n_heads) + " is not a multiple of n_kv_heads " + std::to_string(h.n_kv_heads);
  if ((h.dim / h.n_heads) % 2 != 0)
    return "head size " + std::to_string(h.dim / h.n_heads) + " is odd (RoPE needs pairs)";
  return {};
}

// Number of float32 values the checkpoint must hold after the header (run.c's memory_map_weights).
uint64_t expected_floats(const Header& h) {
  const uint64_t dim = h.dim, hidden = h.hidden_dim, L = h.n_layers, hd = dim / h.n_heads;
  const uint64_t vocab = h.vocab_size < 0 ? -int64_t(h.vocab_size) : h.vocab_size;
  const uint64_t q = h.n_heads * hd, kv = h.n_kv_heads * hd;
  uint64_t n = vocab * dim;                // token embedding
  n += L * dim;                            // rms_att
  n += L * dim * q + 2 * L * dim * kv;     // wq, wk, wv
  n += L * q * dim;                        // wo
  n += L * dim;                            // rms_ffn
  n += 3 * L * dim * hidden;               // w1, w2, w3
  n += dim;                                // rms_final
  n += uint64_t(h.seq_len) * hd;           // freq_cis_real + freq_cis_imag (seq_len * hd/2 each)
  if (h.vocab_size < 0) n += vocab * dim;  // separate classifier
  return n;
}

/// Why a file of `size` bytes whose first bytes are `h` (nullptr when it is shorter than a
/// header) is not a usable checkpoint ("is truncated: ...", "is not a valid ..."), or "".
std::string checkpoint_problem(const Header* h, uint64_t size) {
  if (!h) return "is truncated: " + std::to_string(size) + " bytes, shorter than the 28-byte llama2.c header";
  if (const std::string err = check_header(*h); !err.empty()) return "is not a valid llama2.c checkpoint: " + err;
  const uint64_t need = kHeaderBytes + expected_floats(*h) * sizeof(float);
  if (need > size)
    return "is truncated: the header (dim " + std::to_string(h->dim) + ", " + std::to_string(h->n_layers) +
           " layers, vocab " + std::to_string(std::abs(h->vocab_size)) + ") needs " + std::to_string(need) +
           " bytes, the file has " + std::to_string(size);
  return {};
}

}  // namespace

std::string llama2c_checkpoint_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot be read";
  const auto size = static_cast<uint64_t>(in.tellg());
  if (size < kHeaderBytes) return checkpoint_problem(nullptr, size);
  in.seekg(0);
  Header h{};
  in.read(reinterpret_cast<char*>(&h), kHeaderBytes);
  if (!in) return "cannot be read";
  return checkpoint_problem(&h, size);
}

bool looks_like_llama2c_checkpoint(const std::string& path) { return llama2c_checkpoint_problem(path).empty(); }

LoadedModel load_llama2c(const std::string& path) {
  LoadedModel m;
  m.files.push_back(std::make_unique<MappedFile>(path));
  const MappedFile& file = *m.files.back();
  const std::size_t size = file.size();
  Header h{};
  if (size >= kHeaderBytes) std::memcpy(&h, file.data(), kHeaderBytes);
  if (const std::string problem = checkpoint_problem(size >= kHeaderBytes ? &h : nullptr, size); !problem.empty())
    throw std::runtime_error("'" + path + "' " + problem);

  ModelConfig& c = m.config;
  c.hidden_size = h.dim;
  c.intermediate_size = h.hidden_dim;
  c.n_layers = h.n_layers;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.shared_classifier = h.vocab_size > 0;
  c.vocab_size = std::abs(h.vocab_size);
  c.max_seq_len = h.seq_len;
  c.head_dim = h.dim / h.n_heads;
  c.rope_theta = 10000.0f;
  c.norm_eps = 1e-5f;
  c.bos_id = 1;
  c.eos_id = 2;
  c.stop_on_bos = true;

  const float* p = reinterpret_cast<const float*>(file.data() + kHeaderBytes);
  const uint64_t dim = c.hidden_size, hidden = c.intermediate_size, L = c.n_layers, hd = c.head_dim;
  const uint64_t q = uint64_t(c.n_heads) * hd, kv = uint64_t(c.n_kv_heads) * hd;
  ModelWeights& w = m.weights;
  auto take = [&](uint64_t n) {
    const float* t = p;
    p += n;
    return t;
  };
  // run.c order: each tensor is stacked over layers.
  w.token_embedding = take(uint64_t(c.vocab_size) * dim);
  w.layers.resize(L);
  auto stacked = [&](auto LayerWeights::*field, uint64_t per_layer) {
    const float* base = take(L * per_layer);
    for (uint64_t l = 0; l < L; ++l) w.layers[l].*field = base + l * per_layer;
  };
  stacked(&LayerWeights::attn_norm, dim);
  stacked(&LayerWeights::q_proj, dim * q);
  stacked(&LayerWeights::k_proj, dim * kv);
  stacked(&LayerWeights::v_proj, dim * kv);
  stacked(&LayerWeights::o_proj, q * dim);
  stacked(&LayerWeights::ffn_norm, dim);
  stacked(&LayerWeights::gate_proj, dim * hidden);
  stacked(&LayerWeights::down_proj, hidden * dim);
  stacked(&LayerWeights::up_proj, dim * hidden);
  w.final_norm = take(dim);
  take(uint64_t(c.max_seq_len) * hd);  // freq_cis_real, freq_cis_imag: RoPE is computed instead
  w.lm_head = c.shared_classifier ? w.token_embedding : take(uint64_t(c.vocab_size) * dim);
  return m;
}

}  // namespace pagedchat
