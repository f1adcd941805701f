// Configuration structs: the model's shape (from the checkpoint) and the engine's settings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pagedchat {

/// How rotary embedding pairs a head's dimensions: llama2.c / Meta / GGUF rotate interleaved pairs
/// (2i, 2i+1); Hugging Face checkpoints rotate halves (i, i + head_dim/2) ("neox" style).
enum class RopeStyle { kInterleaved, kNeox };

/// Shape of a Llama-architecture model.
struct ModelConfig {
  int dim = 0;           ///< hidden size
  int hidden_dim = 0;    ///< feed-forward (SwiGLU) size
  int n_layers = 0;
  int n_heads = 0;       ///< query heads
  int n_kv_heads = 0;    ///< key/value heads (grouped-query attention when < n_heads)
  int vocab_size = 0;
  int max_seq_len = 0;   ///< max positions the model was trained with
  /// True when max_seq_len comes from metadata that may understate the trained context (GGUF,
  /// config.json): a larger max_model_len is then allowed with a warning, as vLLM allows.
  bool max_seq_len_is_soft = false;
  int head_dim = 0;      ///< dim / n_heads
  float rope_theta = 10000.0f;
  RopeStyle rope_style = RopeStyle::kInterleaved;
  float norm_eps = 1e-5f;
  bool shared_classifier = true;  ///< output projection tied to the token embedding
  int bos_id = 1;
  int eos_id = 2;
  /// Further ids that also end a sequence, besides eos_id (Hugging Face configs may list several
  /// eos_token_id values: the first becomes eos_id, the rest land here). Empty for most models.
  std::vector<int> extra_eos_ids;
  bool add_bos = true;      ///< prepend BOS to text prompts (tokenizer_config add_bos_token, GGUF add_bos_token)
  bool stop_on_bos = true;  ///< llama2.c checkpoints: a generated BOS ends the sequence (as run.c does)
};

/// Engine settings (vLLM's EngineArgs, trimmed to what this engine uses).
struct EngineConfig {
  std::string model;       ///< a llama2.c .bin file, or a folder holding one .bin and one .model
  std::string tokenizer;   ///< optional explicit sentencepiece .model
  int block_size = 16;     ///< tokens per KV-cache block
  std::size_t kv_cache_bytes = 0;  ///< KV-cache memory (all layers, K and V); 0 = room for 8 full-length sequences
  int num_blocks = 0;      ///< explicit KV block count; overrides kv_cache_bytes when > 0
  int max_num_seqs = 64;   ///< most requests running at once
  int max_num_batched_tokens = 512;  ///< token budget of one step (prefill chunks + decodes)
  int max_model_len = 0;   ///< 0 = the model's max_seq_len; may not exceed it
  int num_threads = 0;     ///< CPU threads for the forward; 0 = hardware concurrency
  bool enable_prefix_caching = true;  ///< reuse KV blocks of identical prompt prefixes
  int long_prefill_token_threshold = 0;  ///< most prompt tokens one request prefills per step; 0 = no cap
  std::string scheduling_policy = "fcfs";  ///< "fcfs" (arrival order) or "priority" (lower value first)
  /// Weight type of the forward (vLLM's --dtype): "auto" (the loaded float32), "float32",
  /// "bfloat16", or "float16". The CPU backend computes in float32 with float32 or bfloat16
  /// weights: "bfloat16" and "float16" pack bfloat16 copies of the matrices (round to nearest
  /// even) and use bfloat16 dot products (AVX512-BF16 where the CPU has it).
  std::string dtype = "auto";
  /// Called during loading with (bytes read, total bytes) of the weight files, from the loading
  /// thread; may be empty.
  std::function<void(std::uint64_t, std::uint64_t)> load_progress;
};

}  // namespace pagedchat
