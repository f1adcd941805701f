#include "engine/loader/random_model.h"

#include <unistd.h>

#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

namespace pagedchat {

namespace {

ModelConfig shape(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int seq) {
  ModelConfig c;
  c.dim = dim;
  c.hidden_dim = hidden;
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
      long long v = 0;
      try {
        v = std::stoll(item.substr(eq + 1));
      } catch (const std::exception&) {
        throw std::invalid_argument("random model: '" + item + "' is not key=integer");
      }
      if (v < 1 || v > (1 << 21)) throw std::invalid_argument("random model: " + key + " out of range");
      if (key == "dim") c.dim = int(v);
      else if (key == "hidden_dim") c.hidden_dim = int(v);
      else if (key == "n_layers") c.n_layers = int(v);
      else if (key == "n_heads") c.n_heads = int(v);
      else if (key == "n_kv_heads") c.n_kv_heads = int(v);
      else if (key == "vocab_size") c.vocab_size = int(v);
      else if (key == "max_seq_len") c.max_seq_len = int(v);
      else if (key == "seed") seed = uint64_t(v);
      else throw std::invalid_argument("random model: unknown key '" + key + "'");
    }
    first = false;
  }
  if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || (c.dim / c.n_heads) % 2 != 0)
    throw std::invalid_argument("random model: dim, n_heads and n_kv_heads do not fit together");
  c.head_dim = c.dim / c.n_heads;
  c.shared_classifier = true;
  c.stop_on_bos = false;

  const uint64_t dim = c.dim, hidden = c.hidden_dim, L = c.n_layers;
  const uint64_t q = uint64_t(c.n_heads) * c.head_dim, kv = uint64_t(c.n_kv_heads) * c.head_dim;
  const uint64_t n = uint64_t(c.vocab_size) * dim + L * (2 * dim + dim * q + 2 * dim * kv + q * dim + 3 * dim * hidden) + dim;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const uint64_t mem = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
  if (mem && n * sizeof(float) > mem * 3 / 4)
    throw std::runtime_error("random model '" + spec + "' needs " + std::to_string(n * sizeof(float) >> 20) +
                             " MiB of float32 weights; this machine has " + std::to_string(mem >> 20) + " MiB");

  LoadedModel m;
  m.config = c;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  auto tensor = [&](uint64_t count, bool ones) {
    float* t = m.allocate(count);
    if (ones) std::fill(t, t + count, 1.0f);
    else for (uint64_t i = 0; i < count; ++i) t[i] = dist(rng);
    return t;
  };
  ModelWeights& w = m.weights;
  w.token_embedding = tensor(uint64_t(c.vocab_size) * dim, false);
  w.layers.resize(L);
  for (auto& l : w.layers) {
    l.rms_att = tensor(dim, true);
    l.wq = tensor(dim * q, false);
    l.wk = tensor(dim * kv, false);
    l.wv = tensor(dim * kv, false);
    l.wo = tensor(q * dim, false);
    l.rms_ffn = tensor(dim, true);
    l.w1 = tensor(dim * hidden, false);
    l.w2 = tensor(hidden * dim, false);
    l.w3 = tensor(dim * hidden, false);
  }
  w.rms_final = tensor(dim, true);
  w.wcls = w.token_embedding;
  return m;
}

}  // namespace pagedchat
