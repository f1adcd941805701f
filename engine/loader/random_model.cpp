#include "engine/loader/random_model.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/core/host_memory.h"

namespace pagedchat {

namespace {

ModelConfig shape(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int seq) {
  ModelConfig c;
  c.hidden_size = dim;
  c.intermediate_size = hidden;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.vocab_size = vocab;
  c.max_seq_len = seq;
  return c;
}

// Shapes of public checkpoints (llama2.c's stories*, TinyLlama, Llama 2/3 config.json).
const std::map<std::string, ModelConfig>& presets() {
  static const std::map<std::string, ModelConfig> p = {
      {"stories260K", shape(64, 172, 5, 8, 4, 512, 512)},
      {"stories15M", shape(288, 768, 6, 6, 6, 32000, 256)},
      {"stories42M", shape(512, 1376, 8, 8, 8, 32000, 1024)},
      {"stories110M", shape(768, 2048, 12, 12, 12, 32000, 1024)},
      {"tinyllama-1.1b", shape(2048, 5632, 22, 32, 4, 32000, 2048)},
      {"llama-2-7b", shape(4096, 11008, 32, 32, 32, 32000, 4096)},
      {"llama-3-8b", shape(4096, 14336, 32, 32, 8, 128256, 8192)},
  };
  return p;
}

}  // namespace

bool is_random_model_spec(const std::string& spec) { return spec.rfind("random:", 0) == 0; }

LoadedModel make_random_model(const std::string& spec) {
  if (!is_random_model_spec(spec)) throw std::invalid_argument("not a random model spec: '" + spec + "'");
  std::stringstream ss(spec.substr(7));
  std::string item;
  ModelConfig c = presets().at("stories15M");
  uint64_t seed = 0;
  bool bf16 = false, tied = true;
  bool first = true;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      auto it = presets().find(item);
      if (!first || it == presets().end()) {
        std::string names;
        for (const auto& [n, _] : presets()) names += (names.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown random model shape '" + item + "' (known: " + names + ")");
      }
      c = it->second;
    } else {
      const std::string key = item.substr(0, eq);
      if (key == "dtype") {
        const std::string t = item.substr(eq + 1);
        if (t != "f32" && t != "bf16")
          throw std::invalid_argument("random model: dtype must be f32 or bf16, got '" + t + "'");
        bf16 = t == "bf16";
        first = false;
        continue;
      }
      long long v = 0;
      try {
        v = std::stoll(item.substr(eq + 1));
      } catch (const std::exception&) {
        throw std::invalid_argument("random model: '" + item + "' is not key=integer");
      }
      if (key == "tied" && (v == 0 || v == 1)) {
        tied = v == 1;
        first = false;
        continue;
      }
      if (v < 1 || v > (1 << 21)) throw std::invalid_argument("random model: " + key + " out of range");
      if (key == "dim")
        c.hidden_size = int(v);
      else if (key == "hidden_dim")
        c.intermediate_size = int(v);
      else if (key == "n_layers")
        c.n_layers = int(v);
      else if (key == "n_heads")
        c.n_heads = int(v);
      else if (key == "n_kv_heads")
        c.n_kv_heads = int(v);
      else if (key == "vocab_size")
        c.vocab_size = int(v);
      else if (key == "max_seq_len")
        c.max_seq_len = int(v);
      else if (key == "seed")
        seed = uint64_t(v);
      else
        throw std::invalid_argument("random model: unknown key '" + key + "'");
    }
    first = false;
  }
  if (c.hidden_size % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || (c.hidden_size / c.n_heads) % 2 != 0)
    throw std::invalid_argument("random model: dim, n_heads and n_kv_heads do not fit together");
  c.head_dim = c.hidden_size / c.n_heads;
  c.shared_classifier = tied;
  c.stop_on_bos = false;

  const uint64_t dim = c.hidden_size, hidden = c.intermediate_size, L = c.n_layers;
  const uint64_t q = uint64_t(c.n_heads) * c.head_dim, kv = uint64_t(c.n_kv_heads) * c.head_dim;
  const uint64_t n = uint64_t(c.vocab_size) * dim * (tied ? 1 : 2) +
                     L * (2 * dim + dim * q + 2 * dim * kv + q * dim + 3 * dim * hidden) + dim;
  const uint64_t bytes = n * (bf16 ? sizeof(uint16_t) : sizeof(float));
  const uint64_t mem = physical_memory_bytes();
  if (mem && bytes > mem * 3 / 4)
    throw std::runtime_error("random model '" + spec + "' needs " + std::to_string(bytes >> 20) + " MiB of " +
                             (bf16 ? "bfloat16" : "float32") + " weights; this machine has " +
                             std::to_string(mem >> 20) + " MiB" + (bf16 ? "" : " (dtype=bf16 halves it)"));

  LoadedModel m;
  m.config = c;
  // Pieces of 1M values, each from its own generator seeded by (seed, tensor, piece), filled on
  // every core: the same weights whatever the core count, and a Llama-3-8B shape in seconds.
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  uint64_t tensor_index = 0;
  // put(i, v) for i < count with v ~ N(0, 0.02), piece by piece on every core.
  auto random_values = [&](uint64_t count, const auto& put) {
    constexpr uint64_t kPiece = 1 << 20;
    const uint64_t pieces = (count + kPiece - 1) / kPiece, id = tensor_index++;
    std::atomic<uint64_t> next{0};
    auto fill = [&] {
      for (uint64_t p; (p = next.fetch_add(1)) < pieces;) {
        std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + (id << 32) + p);
        std::normal_distribution<float> dist(0.0f, 0.02f);
        for (uint64_t i = p * kPiece; i < std::min(count, (p + 1) * kPiece); ++i) put(i, dist(rng));
      }
    };
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < std::min<uint64_t>(threads, pieces); ++i) pool.emplace_back(fill);
    fill();
    for (auto& th : pool) th.join();
  };
  auto tensor = [&](uint64_t count, bool ones) {
    float* t = m.allocate(count);
    if (ones)
      std::fill(t, t + count, 1.0f);
    else
      random_values(count, [t](uint64_t i, float v) { t[i] = v; });
    return t;
  };
  // A matrix: float32, or with dtype=bf16 the same random values rounded to bfloat16.
  auto matrix = [&](uint64_t count) -> WeightTensor {
    if (!bf16) return tensor(count, false);
    uint16_t* t = reinterpret_cast<uint16_t*>(m.allocate_bytes(count * sizeof(uint16_t)));
    random_values(count, [t](uint64_t i, float v) { t[i] = kernels::float_to_bf16(v); });
    return WeightTensor(t, kernels::DType::kBF16);
  };
  ModelWeights& w = m.weights;
  w.token_embedding = matrix(uint64_t(c.vocab_size) * dim);
  w.layers.resize(L);
  for (auto& l : w.layers) {
    l.attn_norm = tensor(dim, true);
    l.q_proj = matrix(dim * q);
    l.k_proj = matrix(dim * kv);
    l.v_proj = matrix(dim * kv);
    l.o_proj = matrix(q * dim);
    l.ffn_norm = tensor(dim, true);
    l.gate_proj = matrix(dim * hidden);
    l.down_proj = matrix(hidden * dim);
    l.up_proj = matrix(dim * hidden);
  }
  w.final_norm = tensor(dim, true);
  w.lm_head = tied ? w.token_embedding : matrix(uint64_t(c.vocab_size) * dim);
  return m;
}

}  // namespace pagedchat
