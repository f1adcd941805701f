#include "cli/engine_options.h"

#include "cli/device_options.h"
#include "cli/dtype_options.h"

namespace pagedchat::cli {

void add_engine_options(CLI::App* cmd, EngineConfig& e, bool prefix_caching_flag, bool oracle_allowed) {
  cmd->add_option("--max-model-len", e.max_model_len, "context length in tokens (default: the model's)");
  cmd->add_option(
         "--mmproj", e.mmproj,
         "the model's image projector (an mmproj-*.gguf beside it; Gemma 3, Gemma 4, Qwen3-VL, Qwen3.5 / 3.6): "
         "prompts may then hold images. A Hugging Face folder (Gemma3ForConditionalGeneration, "
         "Gemma4ForConditionalGeneration, Qwen3VLForConditionalGeneration, Qwen3_5(Moe)ForConditionalGeneration) "
         "brings its own vision tower")
      ->check(CLI::ExistingPath);
  cmd->add_option("--image-min-tokens", e.image_min_tokens,
                  "Qwen3-VL, Qwen3.5: the fewest tokens an image becomes (smaller ones are scaled up; default 64)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--image-max-tokens", e.image_max_tokens,
                  "the most tokens an image becomes (Qwen3-VL, Qwen3.5: larger ones are scaled down, default 4096; "
                  "Gemma 4: every image is scaled to fill it, default 280)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option_function<std::string>(
         "--image-attention",
         [&e](const std::string& v) {
           e.image_bidirectional = v == "auto" ? std::nullopt : std::optional<bool>(v == "bidirectional");
         },
         "Gemma 4: whether an image's tokens attend to each other both ways (26B-A4B, 31B) or causally (E2B, "
         "E4B); auto (default) tells them apart by the per-layer embeddings E2B and E4B have")
      ->check(CLI::IsMember({"auto", "causal", "bidirectional"}));
  cmd->add_option("--kv-cache-bytes", e.kv_cache_bytes, "KV-cache memory in bytes (default: automatic)");
  cmd->add_option("--block-size", e.block_size, "tokens per KV-cache block (default 16)");
  cmd->add_option("--max-num-seqs", e.max_num_seqs, "most requests running at once (default 64)");
  cmd->add_option(
      "--num-state-slots", e.num_state_slots,
      "hybrid models (Qwen3.5): recurrent state slots, one per running sequence plus one checkpoint each (and, "
      "with --speculative-config, one for the state its drafts roll back to), the rest prefix-cache checkpoints "
      "(default 0: 2 (3) * max-num-seqs + 16 within 1/8 of memory)");
  cmd->add_option("--max-num-batched-tokens", e.max_num_batched_tokens, "token budget of one step (default 512)");
  cmd->add_option("--long-prefill-token-threshold", e.long_prefill_token_threshold,
                  "most prompt tokens of one request per step (default 0: no cap)");
  cmd->add_option("--threads", e.num_threads, "CPU threads (default 0: all cores)");
  cmd->add_option_function<std::string>(
      "--speculative-config",
      [&e, oracle_allowed](const std::string& json) {
        try {
          e.speculative_config = parse_speculative_config(json);
        } catch (const std::invalid_argument& error) {
          throw CLI::ValidationError(error.what());  // a usage error, as CLI11's own
        }
        if (!oracle_allowed && e.speculative_config.method == SpeculativeConfig::Method::kOracle)
          throw CLI::ValidationError(
              "--speculative-config: method \"oracle\" replays a recorded continuation and is for `bench latency` "
              "and `bench throughput` only (use \"ngram\", \"draft_model\" or \"mtp\")");
      },
      "speculative decoding, as vLLM spells it: '{\"method\": \"ngram\", \"num_speculative_tokens\": 4, "
      "\"prompt_lookup_max\": 5, \"prompt_lookup_min\": 2}', or '{\"method\": \"draft_model\", \"model\": "
      "\"small.gguf\", \"num_speculative_tokens\": 3}' (a model with the same vocabulary), or '{\"method\": "
      "\"mtp\", \"num_speculative_tokens\": 2}' (the model's own MTP layers: Qwen3.5/3.6 files with nextn layers) "
      "(default: off)");
  add_dtype_options(cmd, e);
  add_device_options(cmd, e);
  if (prefix_caching_flag)
    cmd->add_flag_callback(
        "--no-prefix-caching", [&e] { e.enable_prefix_caching = false; }, "turn automatic prefix caching off");
}

}  // namespace pagedchat::cli
