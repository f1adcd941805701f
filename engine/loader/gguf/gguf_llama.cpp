#include "engine/loader/gguf/gguf_llama.h"

#include <cstring>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "engine/loader/gguf/dequant.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"

namespace pagedchat {
namespace {

// As llama2c_loader.cpp: well past any Llama model, small enough that products cannot overflow.
constexpr int64_t kMaxDim = 1 << 16, kMaxLayers = 1024, kMaxHeads = 1024, kMaxVocab = 1 << 22,
                  kMaxContext = 1 << 24;

[[noreturn]] void fail(const GgufFile& f, const std::string& what) {
  throw std::runtime_error("'" + f.name() + "': " + what);
}

int64_t required_int(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi) {
  const std::optional<int64_t> v = f.get_int(key);
  if (!v) fail(f, "required key '" + key + "' is missing");
  if (*v < lo || *v > hi)
    fail(f, "key '" + key + "' is " + std::to_string(*v) + ", outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return *v;
}

std::vector<uint64_t> trimmed(std::vector<uint64_t> ne) {
  while (ne.size() > 1 && ne.back() == 1) ne.pop_back();
  return ne;
}

std::string shape_str(const std::vector<uint64_t>& ne) {
  std::string s = "[";
  for (std::size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

// Turns the file's tensors into float32 pointers, checking names, shapes and types.
class TensorLoader {
 public:
  TensorLoader(GgufFile& f, LoadedModel& m) : f_(f), m_(m) {
    // Keep the mapping only when some matrix is used from it in place; otherwise copy the norms.
    // Bytes parsed from memory (GgufFile::parse) are always copied.
    if (f.mapped())
      for (const auto& t : f.tensors())
        if (t.type == GgmlType::F32 && trimmed(t.ne).size() >= 2 && in_place_ok(t)) keep_mapping_ = true;
  }

  /// The tensor `name` of shape [rows, cols] (rows == 0: a vector of cols).
  const float* get(const std::string& name, uint64_t rows, uint64_t cols) {
    const GgufTensorInfo* t = f_.find_tensor(name);
    if (!t) fail(f_, "required tensor '" + name + "' is missing");
    used_.insert(name);
    std::vector<uint64_t> want = {cols};
    if (rows) want.push_back(rows);
    if (trimmed(t->ne) != trimmed(want))
      fail(f_, "tensor '" + name + "' has shape " + shape_str(t->ne) + ", expected " + shape_str(want) +
                   " (GGUF order: columns first)");
    if (!can_dequantize(t->type))
      fail(f_, "tensor '" + name + "' has type " + ggml_type_name(uint32_t(t->type)) +
                   ", which this engine cannot load (supported: f32, f16, bf16, q8_0, q4_0, q4_K, q6_K)");
    const uint8_t* src = f_.tensor_data(*t);
    if (t->type == GgmlType::F32 && keep_mapping_ && in_place_ok(*t)) return reinterpret_cast<const float*>(src);
    float* dst = m_.allocate(t->n_elements);
    dequantize(t->type, src, dst, t->n_elements);  // quantized weights: float32 copies (see header)
    return dst;
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

  /// Refuses tensors nothing used (a variant this loader would run wrongly); keeps the mapping if needed.
  void finish() {
    for (const auto& t : f_.tensors())
      if (!used_.count(t.name))
        fail(f_, "tensor '" + t.name + "' is not part of a plain Llama model (unsupported variant: " +
                     (t.name.find("bias") != std::string::npos ? "attention/FFN biases" : "unknown tensor") + ")");
    if (keep_mapping_) m_.files.push_back(f_.take_mapping());
  }

 private:
  bool in_place_ok(const GgufTensorInfo& t) const {
    return reinterpret_cast<std::uintptr_t>(f_.tensor_data(t)) % alignof(float) == 0;
  }
  GgufFile& f_;
  LoadedModel& m_;
  bool keep_mapping_ = false;
  std::set<std::string> used_;
};

}  // namespace

LoadedModel load_gguf_llama(GgufFile& f) {
  const std::optional<std::string> arch = f.get_string("general.architecture");
  if (!arch) fail(f, "required key 'general.architecture' is missing");
  if (*arch != "llama") fail(f, "architecture '" + *arch + "' is not supported (only 'llama')");
  if (f.get_int("llama.expert_count").value_or(0) > 0)
    fail(f, "mixture-of-experts models (llama.expert_count " + std::to_string(*f.get_int("llama.expert_count")) +
                ") are not supported");
  if (const auto scaling = f.get_string("llama.rope.scaling.type"); scaling && *scaling != "none")
    if (f.get_float("llama.rope.scaling.factor").value_or(1.0) != 1.0)
      fail(f, "RoPE scaling '" + *scaling + "' (llama.rope.scaling.*) is not supported");
  if (f.get_float("llama.rope.scale_linear").value_or(1.0) != 1.0)  // older files' linear RoPE scaling
    fail(f, "RoPE scaling (llama.rope.scale_linear) is not supported");
  if (f.find_tensor("rope_freqs.weight"))
    fail(f, "tensor 'rope_freqs.weight' (Llama 3.1 RoPE frequency scaling) is not supported");

  LoadedModel m;
  ModelConfig& c = m.config;
  c.dim = int(required_int(f, "llama.embedding_length", 1, kMaxDim));
  c.n_layers = int(required_int(f, "llama.block_count", 1, kMaxLayers));
  c.hidden_dim = int(required_int(f, "llama.feed_forward_length", 1, 4 * kMaxDim));
  c.n_heads = int(required_int(f, "llama.attention.head_count", 1, kMaxHeads));
  c.n_kv_heads = f.find("llama.attention.head_count_kv")
                     ? int(required_int(f, "llama.attention.head_count_kv", 1, c.n_heads))
                     : c.n_heads;
  c.max_seq_len = int(required_int(f, "llama.context_length", 1, kMaxContext));
  c.max_seq_len_is_soft = true;  // converters write guesses (stories260K.gguf says 128, trained 512)
  if (c.dim % c.n_heads != 0)
    fail(f, "embedding_length " + std::to_string(c.dim) + " is not a multiple of head_count " + std::to_string(c.n_heads));
  if (c.n_heads % c.n_kv_heads != 0)
    fail(f, "head_count " + std::to_string(c.n_heads) + " is not a multiple of head_count_kv " + std::to_string(c.n_kv_heads));
  c.head_dim = c.dim / c.n_heads;
  if (c.head_dim % 2 != 0) fail(f, "head size " + std::to_string(c.head_dim) + " is odd (RoPE needs pairs)");
  if (const auto rd = f.get_int("llama.rope.dimension_count"); rd && *rd != c.head_dim)
    fail(f, "llama.rope.dimension_count is " + std::to_string(*rd) + " but the head size is " +
                std::to_string(c.head_dim) + " (partial RoPE is not supported)");
  c.rope_theta = float(f.get_float("llama.rope.freq_base").value_or(10000.0));
  c.norm_eps = float(f.get_float("llama.attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rope_theta > 0.0f) || !(c.norm_eps > 0.0f) || c.norm_eps > 1.0f)
    fail(f, "llama.rope.freq_base or llama.attention.layer_norm_rms_epsilon is out of range");
  c.rope_style = RopeStyle::kInterleaved;
  c.stop_on_bos = false;  // as llama.cpp: only end-of-generation tokens stop
  for (const auto& [key, field, fallback] : {std::tuple{"tokenizer.ggml.bos_token_id", &ModelConfig::bos_id, 1},
                                              std::tuple{"tokenizer.ggml.eos_token_id", &ModelConfig::eos_id, 2}}) {
    const int64_t id = f.get_int(key).value_or(fallback);
    c.*field = id >= 0 && id < kMaxVocab ? int(id) : -1;
  }

  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  if (!emb) fail(f, "required tensor 'token_embd.weight' is missing");
  if (emb->ne.size() < 2 || emb->ne[1] < 1 || emb->ne[1] > uint64_t(kMaxVocab))
    fail(f, "tensor 'token_embd.weight' has shape " + shape_str(emb->ne) + ", expected [" + std::to_string(c.dim) + ", vocab]");
  c.vocab_size = int(emb->ne[1]);
  if (const auto vs = f.get_int("llama.vocab_size"); vs && *vs != c.vocab_size)
    fail(f, "llama.vocab_size " + std::to_string(*vs) + " differs from token_embd.weight's " + std::to_string(c.vocab_size) + " rows");

  TensorLoader t(f, m);
  const uint64_t dim = c.dim, hidden = c.hidden_dim, q = uint64_t(c.n_heads) * c.head_dim,
                 kv = uint64_t(c.n_kv_heads) * c.head_dim, vocab = c.vocab_size;
  LlamaWeights& w = m.weights;
  w.token_embedding = t.get("token_embd.weight", vocab, dim);
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    lw.rms_att = t.get(p + "attn_norm.weight", 0, dim);
    lw.wq = t.get(p + "attn_q.weight", q, dim);
    lw.wk = t.get(p + "attn_k.weight", kv, dim);
    lw.wv = t.get(p + "attn_v.weight", kv, dim);
    lw.wo = t.get(p + "attn_output.weight", dim, q);
    lw.rms_ffn = t.get(p + "ffn_norm.weight", 0, dim);
    lw.w1 = t.get(p + "ffn_gate.weight", hidden, dim);
    lw.w2 = t.get(p + "ffn_down.weight", dim, hidden);
    lw.w3 = t.get(p + "ffn_up.weight", hidden, dim);
  }
  w.rms_final = t.get("output_norm.weight", 0, dim);
  c.shared_classifier = !t.has("output.weight");
  w.wcls = c.shared_classifier ? w.token_embedding : t.get("output.weight", vocab, dim);
  t.finish();
  return m;
}

GgufModel load_gguf(const std::string& path, bool with_tokenizer) {
  GgufFile f = GgufFile::open(path);
  GgufModel g;
  if (with_tokenizer) {
    g.tokenizer = load_gguf_tokenizer(f);
    g.add_bos = g.tokenizer->add_bos();  // add_bos_token, else llama.cpp's default for the vocabulary
  }
  g.chat_template = read_gguf_chat_template(f);
  g.model = load_gguf_llama(f);
  return g;
}

}  // namespace pagedchat
