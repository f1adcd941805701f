#include "engine/loader/hf/hf_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <list>
#include <set>
#include <stdexcept>

#include <sentencepiece_processor.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "engine/loader/hf/hf_config.h"
#include "engine/model/arch/registry.h"
#include "kernels/quant/dtype.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace pagedchat {
namespace {

/// A tensor to write whose bytes are produced on demand (one tensor in memory at a time).
struct Entry {
  std::string name;
  StDtype dtype;
  std::vector<uint64_t> shape;
  std::function<void(std::vector<uint8_t>&)> fill;  ///< appends exactly nbytes
};

uint64_t numel(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

void write_entries(const std::string& path, const std::vector<Entry>& entries, std::stop_token stop = {}) {
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  std::set<std::string> names;
  for (const Entry& e : entries) {
    if (!names.insert(e.name).second)
      throw std::invalid_argument("write_safetensors: duplicate tensor '" + e.name + "'");
    const uint64_t nbytes = numel(e.shape) * dtype_size(e.dtype);
    header[e.name] = {{"dtype", dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot create '" + path + "'");
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(text.size()) >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), std::streamsize(text.size()));
  std::vector<uint8_t> bytes;
  for (const Entry& e : entries) {
    if (stop.stop_requested()) throw std::runtime_error("'" + path + "': stopped before it was complete");
    bytes.clear();
    e.fill(bytes);
    if (bytes.size() != numel(e.shape) * dtype_size(e.dtype))
      throw std::logic_error("write_safetensors: tensor '" + e.name + "' produced a wrong number of bytes");
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path + "' (disk full?)");
}

// A tokenizer file copied into the new folder, writable by its owner like the files written
// beside it (a read-only source, say from a package or a hub cache, stays read-only otherwise).
void copy_tokenizer_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec))
    throw std::runtime_error("cannot copy '" + from.string() + "' to '" + to.string() + "': " + ec.message());
  fs::permissions(to, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add, ec);
}

void write_json(const fs::path& path, const json& j) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << j.dump(2) << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

std::string spec_text(const LayerSpec& s) {
  std::string t = s.sliding_window > 0 ? "sliding (window " + std::to_string(s.sliding_window) + ")" : "global";
  if (!s.use_rope) return t + ", no RoPE";
  char base[32];
  std::snprintf(base, sizeof base, "%.9g", s.rope_theta);
  return t + ", RoPE base " + base + (s.rope_scaled ? "" : " unscaled") + (s.moe ? ", experts" : "");
}

// What differs between the model's config `c` and `got`, the config a reader derives from the
// config.json written for it ("" when they compute the same): shapes, RoPE, norms, scales,
// per-layer specs, experts. Biases are not compared (the writer stores declared-but-absent ones as
// zeros), nor the special token ids.
std::string hf_config_mismatch(const ModelConfig& c, const ModelConfig& got, bool any_moe) {
  auto num = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", x);
    return std::string(b);
  };
  auto differs = [&](const char* what, double mine, double theirs) -> std::string {
    if (mine == theirs) return {};
    return std::string(what) + " " + num(mine) + " reads back as " + num(theirs);
  };
  auto scale = [&](float s) { return s != 0.0f ? s : 1.0f / std::sqrt(float(c.head_dim)); };
  for (const std::string& why :
       {differs("hidden_size", c.hidden_size, got.hidden_size), differs("num_hidden_layers", c.n_layers, got.n_layers),
        differs("num_attention_heads", c.n_heads, got.n_heads),
        differs("num_key_value_heads", c.n_kv_heads, got.n_kv_heads),
        differs("vocab_size", c.vocab_size, got.vocab_size), differs("head_dim", c.head_dim, got.head_dim),
        differs("rotary dims", c.rotary_dims(), got.rotary_dims()), differs("rms_norm_eps", c.norm_eps, got.norm_eps),
        differs("rope_theta", c.rope_theta, got.rope_theta),
        differs("RoPE scaling type", int(c.rope_scaling.type), int(got.rope_scaling.type)),
        differs("RoPE attention factor", c.rope_attn_factor, got.rope_attn_factor),
        differs("attention scale", scale(c.attention_scale), scale(got.attention_scale)),
        differs("embedding scale", c.embedding_scale, got.embedding_scale),
        differs("final logit softcap", c.final_logit_softcap, got.final_logit_softcap),
        differs("MLP activation", int(c.activation), int(got.activation)),
        differs("pre-norm", c.pre_norm, got.pre_norm), differs("post-norm", c.post_norm, got.post_norm),
        differs("q/k norm", c.qk_norm, got.qk_norm)})
    if (!why.empty()) return why;
  if (c.rope_scaling.type != RopeScalingType::kNone &&
      (c.rope_scaling.factor != got.rope_scaling.factor ||
       (c.rope_scaling.type == RopeScalingType::kLlama3 &&
        (c.rope_scaling.low_freq_factor != got.rope_scaling.low_freq_factor ||
         c.rope_scaling.high_freq_factor != got.rope_scaling.high_freq_factor ||
         c.rope_scaling.original_max_position_embeddings != got.rope_scaling.original_max_position_embeddings))))
    return "the rope_scaling parameters do not read back";
  if (c.rope_freq_factors != got.rope_freq_factors || c.rope_freq_factors_long != got.rope_freq_factors_long ||
      (!c.rope_freq_factors_long.empty() && c.rope_long_threshold != got.rope_long_threshold))
    return "the RoPE frequency factors do not read back";
  if ((c.attention_qkv_bias && !got.attention_qkv_bias) || (c.attention_out_bias && !got.attention_out_bias))
    return "the attention biases have no place";
  const bool scaled = c.rope_scaling.type != RopeScalingType::kNone || !c.rope_freq_factors.empty();
  bool any_dense = false;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerSpec x = c.layer(l), y = got.layer(l);
    if (x.sliding_window != y.sliding_window || x.use_rope != y.use_rope || x.moe != y.moe ||
        (x.use_rope && (x.rope_theta != y.rope_theta || (scaled && x.rope_scaled != y.rope_scaled))))
      return "layer " + std::to_string(l) + " is " + spec_text(x) + " but reads back as " + spec_text(y);
    any_dense |= !x.moe;
  }
  if (any_dense && c.intermediate_size != got.intermediate_size)
    return differs("intermediate_size", c.intermediate_size, got.intermediate_size);
  if (any_moe) {
    const MoeConfig &m = c.moe, &n = got.moe;
    if (m.num_experts != n.num_experts || m.num_experts_per_tok != n.num_experts_per_tok ||
        m.expert_intermediate_size != n.expert_intermediate_size || m.norm_topk_prob != n.norm_topk_prob ||
        m.softmax_before_topk != n.softmax_before_topk ||
        m.shared_expert_intermediate_size != n.shared_expert_intermediate_size ||
        m.shared_expert_gated != n.shared_expert_gated)
      return "the experts (count, top-k, width, routing) do not read back";
  }
  return {};
}

}  // namespace

double hf_short_double(float f) {
  char buf[32];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, double(f));
    if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
  }
  return double(f);
}

int hf_sliding_window(const ModelConfig& c) {
  int window = 0;
  for (int l = 0; l < c.n_layers; ++l)
    if (c.layer(l).sliding_window > 0) window = c.layer(l).sliding_window;
  return window;
}

json hf_layer_types(const ModelConfig& c) {
  json layer_types = json::array();
  for (int l = 0; l < c.n_layers; ++l)
    layer_types.push_back(c.layer(l).sliding_window > 0 ? "sliding_attention" : "full_attention");
  return layer_types;
}

void write_safetensors(const std::string& path, const std::vector<StTensorOut>& tensors) {
  std::vector<Entry> entries;
  for (const StTensorOut& t : tensors) {
    const uint64_t nbytes = numel(t.shape) * dtype_size(t.dtype);
    const auto* p = static_cast<const uint8_t*>(t.data);
    entries.push_back({t.name, t.dtype, t.shape, [p, nbytes](std::vector<uint8_t>& b) { b.assign(p, p + nbytes); }});
  }
  write_entries(path, entries);
}

namespace {
// Through symlinks to where the folder is (or will be): a link to a folder is written into.
fs::path resolved_output_folder(const std::string& dir) {
  std::error_code ec;
  fs::path final_dir = fs::weakly_canonical(fs::path(dir), ec);
  if (ec) final_dir = fs::path(dir).lexically_normal();
  if (!final_dir.has_filename() && final_dir.has_parent_path()) final_dir = final_dir.parent_path();
  return final_dir;
}
}  // namespace

std::string hf_staging_folder(const std::string& dir) {
  return resolved_output_folder(dir).string() + ".partial-" + std::to_string(::getpid());
}

void write_hf_folder(const LoadedModel& model, const std::string& tokenizer_path, const std::string& dir,
                     const std::string& dtype, std::stop_token stop) {
  if (dtype != "f32" && dtype != "bf16")
    throw std::invalid_argument("dtype '" + dtype + "' is not supported for a Hugging Face folder (f32 or bf16)");
  const StDtype out_type = dtype == "f32" ? StDtype::kF32 : StDtype::kBF16;
  const ModelConfig& c = model.config;
  const ModelWeights& w = model.weights;
  auto refuse = [&](const std::string& why) {
    throw std::runtime_error("cannot write '" + dir + "' as a Hugging Face folder: " + why);
  };
  if (c.num_recurrent_layers() > 0 || c.attn_output_gate || c.nextn_predict_layers > 0)
    refuse("converting " + c.architecture +
           " models (Gated DeltaNet layers, gated attention, MTP blocks) is not supported yet; use the file as it is");
  // The transformers class of the family, and what its config.json can say.
  const ModelFamily* fam = find_family_by_gguf_name(c.architecture);
  if (!fam || fam->hf_classes.empty()) refuse("architecture '" + c.architecture + "' has no transformers class here");
  // Gemma 4 folders are read, not yet written (per-layer shapes, shared KV, per-layer embeddings).
  if (!fam->hf_write_config)
    refuse("writing " + std::string(fam->description) +
           " as a Hugging Face folder is not supported yet; use the file as it is");
  const HfClass& cls = fam->hf_classes.front();
  const std::string architecture(cls.name), model_type(cls.model_type);
  const bool required_qkv_bias = fam->qkv_bias == TensorRule::kRequired;  // Qwen2
  if (required_qkv_bias && !c.attention_qkv_bias) refuse("a " + c.architecture + " model without q/k/v biases");
  if (required_qkv_bias && !cls.attention_bias && c.attention_out_bias) refuse(architecture + " has no o_proj bias");
  if (c.qk_norm != fam->qk_norm)
    refuse(c.qk_norm ? "q/k norms are not part of " + architecture : architecture + " needs q/k norms");
  if (c.pre_norm != fam->pre_norm || c.post_norm != fam->post_norm)
    refuse("the model's norm placement is not " + architecture + "'s");
  if (!c.rope_freq_factors.empty() && !fam->longrope)
    refuse("its RoPE frequency factors (GGUF rope_freqs.weight) have no rope_scaling parameters to write");
  const bool longrope = !c.rope_freq_factors.empty();
  if (longrope && c.rope_freq_factors_long.size() != c.rope_freq_factors.size())
    refuse("LongRoPE short factors without long ones");
  if (!longrope && c.rope_attn_factor != 1.0f) refuse("a RoPE attention factor without LongRoPE factors");
  // Classes that read attention_bias (Llama, Qwen3(-MoE), SmolLM3) declare q/k/v and o biases
  // together; a missing one is zero. Gemma 3, Phi-3 and EXAONE 4 have none.
  if (!cls.attention_bias && !required_qkv_bias && (c.attention_qkv_bias || c.attention_out_bias))
    refuse(architecture + " has no attention biases");
  const bool attention_bias = cls.attention_bias && (c.attention_qkv_bias || c.attention_out_bias);
  const bool qkv_bias = required_qkv_bias || attention_bias;
  const bool tok_json = tokenizer_path.size() >= 5 &&
                        tokenizer_path.compare(tokenizer_path.size() - 5, 5, ".json") == 0;
  // Gemma's norms are stored as w for (1 + w) (Gemma3RMSNorm).
  const float norm_offset = fam->hf_norm_weight_offset;
  bool any_moe = false;
  for (int l = 0; l < c.n_layers; ++l) any_moe |= c.layer(l).moe;

  // config.json, composed first: read back by parse_hf_config, it must give this model's
  // ModelConfig, or the folder would compute something else.
  json eos = c.eos_id >= 0 ? json(c.eos_id) : json(nullptr);
  if (!c.extra_eos_ids.empty()) {
    eos = json::array({c.eos_id});
    for (int id : c.extra_eos_ids) eos.push_back(id);
  }
  const json bos = c.bos_id >= 0 ? json(c.bos_id) : json(nullptr);
  json rope_scaling = nullptr;
  if (c.rope_scaling.type == RopeScalingType::kLinear)
    rope_scaling = {{"rope_type", "linear"}, {"factor", c.rope_scaling.factor}};
  else if (c.rope_scaling.type == RopeScalingType::kLlama3)
    rope_scaling = {{"rope_type", "llama3"},
                    {"factor", c.rope_scaling.factor},
                    {"low_freq_factor", c.rope_scaling.low_freq_factor},
                    {"high_freq_factor", c.rope_scaling.high_freq_factor},
                    {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
  const bool tied = c.shared_classifier || w.lm_head == w.token_embedding;
  json config = {{"architectures", {architecture}},
                 {"model_type", model_type},
                 {"hidden_size", c.hidden_size},
                 {"intermediate_size", c.intermediate_size > 0 ? c.intermediate_size : c.moe.expert_intermediate_size},
                 {"num_hidden_layers", c.n_layers},
                 {"num_attention_heads", c.n_heads},
                 {"num_key_value_heads", c.n_kv_heads},
                 {"head_dim", c.head_dim},
                 {"hidden_act", "silu"},
                 {"max_position_embeddings", c.max_seq_len},
                 {"rms_norm_eps", hf_short_double(c.norm_eps)},
                 {"rope_theta", hf_short_double(c.rope_theta)},
                 {"rope_scaling", rope_scaling},
                 {"tie_word_embeddings", tied},
                 {"vocab_size", c.vocab_size},
                 {"bos_token_id", bos},
                 {"eos_token_id", eos},
                 {"torch_dtype", dtype == "f32" ? "float32" : "bfloat16"}};
  if (cls.attention_bias) config["attention_bias"] = attention_bias;
  if (fam->hf_write_config) fam->hf_write_config(c, config);  // the family's keys
  try {
    const HfModelConfig back = parse_hf_config(config.dump(), (fs::path(dir) / "config.json").string());
    if (const std::string why = hf_config_mismatch(c, back.config, any_moe); !why.empty())
      refuse(why + " (config.json cannot say what this model computes)");
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind("cannot write", 0) == 0) throw;
    refuse(std::string("its config.json would not load: ") + e.what());
  }

  // A new (or empty) folder only: files already there would be read beside the new ones (a stale
  // model.safetensors.index.json wins over model.safetensors), and the source may be among them
  // (a folder converted onto itself was truncated while it was read).
  std::error_code ec;
  if (dir.empty()) throw std::runtime_error("cannot write a Hugging Face folder: no output folder was named");
  const fs::path final_dir = resolved_output_folder(dir);
  const bool exists = fs::exists(final_dir, ec);
  if (exists && !(fs::is_directory(final_dir, ec) && fs::is_empty(final_dir, ec)))
    refuse(std::string(fs::is_directory(final_dir, ec) ? "it is a folder with files in it" : "it is a file") +
           " (convert writes a new or empty folder: choose another --out, or remove it first)");
  // The tokenizer first, so a bad path fails before anything is written.
  sentencepiece::SentencePieceProcessor sp;
  if (!tokenizer_path.empty() && !tok_json && !sp.Load(tokenizer_path).ok())
    throw std::runtime_error("cannot load sentencepiece tokenizer '" + tokenizer_path + "'");
  if (tok_json && !fs::is_regular_file(tokenizer_path, ec))
    throw std::runtime_error("cannot read tokenizer '" + tokenizer_path + "'");
  // Everything is written into a staging folder beside it, moved into place at the end: a failed
  // write leaves no half folder under the name asked for.
  if (final_dir.has_parent_path()) fs::create_directories(final_dir.parent_path(), ec);
  const fs::path d = hf_staging_folder(dir);
  fs::remove_all(d, ec);
  fs::create_directories(d, ec);
  if (!fs::is_directory(d, ec))
    throw std::runtime_error("cannot create folder '" + d.string() + "' beside '" + dir + "'" +
                             (ec ? ": " + ec.message() : std::string()));
  struct Staging {
    fs::path path;
    bool published = false;
    ~Staging() {
      std::error_code e;
      if (!published) fs::remove_all(path, e);
    }
  } staging{d};
  auto publish = [&] {
    std::error_code e;
    if (!exists) {
      fs::rename(d, final_dir, e);
    } else {  // an empty folder asked for: its files moved in (its owner and mode stay)
      for (const fs::directory_entry& f : fs::directory_iterator(d, e)) {
        fs::rename(f.path(), final_dir / f.path().filename(), e);
        if (e) break;
      }
      if (!e) fs::remove(d, e);
    }
    if (e) throw std::runtime_error("cannot move '" + d.string() + "' to '" + dir + "': " + e.message());
    staging.published = true;
  };

  // Rows of an [heads * head_dim, in] projection (or of its bias), permuted per head from
  // interleaved pairs (2i, 2i+1) to halves (i, i + head_dim/2): new row j*half + i = old row 2i + j.
  const bool permute = c.rope_style == RopeStyle::kInterleaved;
  if (permute && fam->fused_qkv) refuse("a fused q/k/v projection in interleaved RoPE layout");
  const int hd = c.head_dim, half = hd / 2;
  const std::vector<float> zeros(std::size_t(std::max(c.hidden_size, (c.n_heads + 2 * c.n_kv_heads) * hd)), 0.0f);
  std::list<std::vector<float>> shifted;  // norm weights less Gemma's offset (stable addresses)
  // A tensor [rows, cols] (cols 0: a vector of rows) from `src` (any type, converted row by row
  // when written), its rows taken from `from` one after the other (a fused matrix from its parts).
  auto tensor = [&](std::string name, std::vector<std::pair<WeightTensor, uint64_t>> from, uint64_t rows, uint64_t cols,
                    bool permute_heads) {
    for (auto& [t, n] : from)
      if (!t) t = WeightTensor(zeros.data());  // an absent bias of a model whose config declares them: zero
    Entry e{std::move(name), out_type, cols ? std::vector<uint64_t>{rows, cols} : std::vector<uint64_t>{rows}, {}};
    e.fill = [=](std::vector<uint8_t>& b) {
      const uint64_t width = cols ? cols : 1;
      b.resize(rows * width * dtype_size(out_type));
      std::vector<float> row(width);
      for (uint64_t r = 0; r < rows; ++r) {
        uint64_t at = r;
        if (permute_heads && permute) {
          const uint64_t h = r / hd, k = r % hd, i = k % half, j = k / half;
          at = h * hd + 2 * i + j;
        }
        std::size_t part = 0;
        while (part + 1 < from.size() && at >= from[part].second) at -= from[part++].second;
        const WeightTensor& t = from[part].first;
        kernels::dequantize_row(t.dtype, static_cast<const uint8_t*>(t.data) + at * t.bytes(width), row.data(),
                                int64_t(width));  // a vector's "row" is one element
        if (out_type == StDtype::kF32) {
          std::memcpy(b.data() + r * width * 4, row.data(), width * 4);
        } else {
          uint8_t* o = b.data() + r * width * 2;
          for (uint64_t x = 0; x < width; ++x) {
            const uint16_t v = f32_to_bf16(row[x]);
            o[2 * x] = uint8_t(v & 0xff);
            o[2 * x + 1] = uint8_t(v >> 8);
          }
        }
      }
    };
    return e;
  };
  auto matrix = [&](std::string name, const WeightTensor& t, uint64_t rows, uint64_t cols, bool rope_rows = false) {
    return tensor(std::move(name), {{t, rows}}, rows, cols, rope_rows);
  };
  auto vector = [&](std::string name, const float* v, uint64_t n, bool rope_rows = false) {
    return tensor(std::move(name), {{WeightTensor(v), n}}, n, 0, rope_rows);
  };
  auto norm = [&](std::string name, const float* v, uint64_t n) {
    if (norm_offset != 0.0f && v) {
      std::vector<float>& copy = shifted.emplace_back(v, v + n);
      for (float& x : copy) x -= norm_offset;  // exact: x is near 1
      v = copy.data();
    }
    return vector(std::move(name), v, n);
  };

  const uint64_t dim = c.hidden_size, hidden = c.intermediate_size, vocab = c.vocab_size;
  const uint64_t q = uint64_t(c.n_heads) * hd, kv = uint64_t(c.n_kv_heads) * hd;
  std::vector<Entry> entries;
  entries.push_back(matrix("model.embed_tokens.weight", w.token_embedding, vocab, dim));
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LayerWeights& lw = w.layers[l];
    if (c.pre_norm) entries.push_back(norm(p + "input_layernorm.weight", lw.attn_norm, dim));
    if (fam->fused_qkv) {
      entries.push_back(tensor(p + "self_attn.qkv_proj.weight", {{lw.q_proj, q}, {lw.k_proj, kv}, {lw.v_proj, kv}},
                               q + 2 * kv, dim, false));
    } else {
      entries.push_back(matrix(p + "self_attn.q_proj.weight", lw.q_proj, q, dim, true));
      entries.push_back(matrix(p + "self_attn.k_proj.weight", lw.k_proj, kv, dim, true));
      entries.push_back(matrix(p + "self_attn.v_proj.weight", lw.v_proj, kv, dim));
    }
    entries.push_back(matrix(p + "self_attn.o_proj.weight", lw.o_proj, dim, q));
    if (qkv_bias) {
      entries.push_back(vector(p + "self_attn.q_proj.bias", lw.bq, q, true));
      entries.push_back(vector(p + "self_attn.k_proj.bias", lw.bk, kv, true));
      entries.push_back(vector(p + "self_attn.v_proj.bias", lw.bv, kv));
    }
    if (attention_bias) entries.push_back(vector(p + "self_attn.o_proj.bias", lw.bo, dim));
    if (c.qk_norm) {
      entries.push_back(norm(p + "self_attn.q_norm.weight", lw.q_norm, uint64_t(hd)));
      entries.push_back(norm(p + "self_attn.k_norm.weight", lw.k_norm, uint64_t(hd)));
    }
    if (c.pre_norm && !c.post_norm) {
      entries.push_back(norm(p + "post_attention_layernorm.weight", lw.ffn_norm, dim));  // Llama's pre-MLP norm
    } else {
      entries.push_back(norm(p + "post_attention_layernorm.weight", lw.post_attention_norm, dim));
      if (c.pre_norm) entries.push_back(norm(p + "pre_feedforward_layernorm.weight", lw.ffn_norm, dim));
      entries.push_back(norm(p + "post_feedforward_layernorm.weight", lw.post_ffw_norm, dim));
    }
    if (c.layer(l).moe) {
      const uint64_t E = c.moe.num_experts, ef = c.moe.expert_intermediate_size;
      if (lw.moe.gate.size() != E || lw.moe.up.size() != E || lw.moe.down.size() != E)
        refuse("layer " + std::to_string(l) + " has not " + std::to_string(E) + " experts");
      entries.push_back(matrix(p + "mlp.gate.weight", lw.moe.router, E, dim));
      for (uint64_t e = 0; e < E; ++e) {
        const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
        entries.push_back(matrix(x + "gate_proj.weight", lw.moe.gate[e], ef, dim));
        entries.push_back(matrix(x + "up_proj.weight", lw.moe.up[e], ef, dim));
        entries.push_back(matrix(x + "down_proj.weight", lw.moe.down[e], dim, ef));
      }
    } else if (fam->fused_gate_up) {
      entries.push_back(tensor(p + "mlp.gate_up_proj.weight", {{lw.gate_proj, hidden}, {lw.up_proj, hidden}},
                               2 * hidden, dim, false));
      entries.push_back(matrix(p + "mlp.down_proj.weight", lw.down_proj, dim, hidden));
    } else {
      entries.push_back(matrix(p + "mlp.gate_proj.weight", lw.gate_proj, hidden, dim));
      entries.push_back(matrix(p + "mlp.up_proj.weight", lw.up_proj, hidden, dim));
      entries.push_back(matrix(p + "mlp.down_proj.weight", lw.down_proj, dim, hidden));
    }
  }
  entries.push_back(norm("model.norm.weight", w.final_norm, dim));
  if (!tied) entries.push_back(matrix("lm_head.weight", w.lm_head, vocab, dim));
  write_entries((d / "model.safetensors").string(), entries, std::move(stop));

  write_json(d / "config.json", config);
  write_json(d / "generation_config.json",
             {{"_from_model_config", true}, {"bos_token_id", bos}, {"eos_token_id", eos}});

  if (tokenizer_path.empty()) return publish();  // no tokenizer files (the folder is loaded with one named)
  if (tok_json) {
    // A byte-level BPE tokenizer.json (Llama 3, Qwen): copied with the tokenizer_config.json
    // (special tokens, chat template) beside it, when there is one.
    const fs::path src_config = fs::path(tokenizer_path).parent_path() / "tokenizer_config.json";
    for (const auto& [from, to] : {std::pair{fs::path(tokenizer_path), d / "tokenizer.json"},
                                   std::pair{src_config, d / "tokenizer_config.json"}}) {
      if (!fs::is_regular_file(from, ec) || fs::equivalent(from, to, ec)) continue;
      copy_tokenizer_file(from, to);
    }
    return publish();
  }
  json tc = {{"tokenizer_class", "LlamaTokenizer"},
             {"add_bos_token", true},
             {"add_eos_token", false},
             {"model_max_length", c.max_seq_len},
             {"clean_up_tokenization_spaces", false},
             {"legacy", true}};
  if (!tokenizer_path.empty()) {
    auto piece = [&](int id) { return id >= 0 && id < sp.GetPieceSize() ? json(sp.IdToPiece(id)) : json(nullptr); };
    tc["bos_token"] = piece(sp.bos_id());
    tc["eos_token"] = piece(sp.eos_id());
    tc["unk_token"] = piece(sp.unk_id());
    tc["pad_token"] = nullptr;
    const fs::path dst = d / "tokenizer.model";
    if (!fs::equivalent(tokenizer_path, dst, ec)) copy_tokenizer_file(tokenizer_path, dst);
  }
  write_json(d / "tokenizer_config.json", tc);
  publish();
}

}  // namespace pagedchat
