// Configuration structs: the model's shape (from the checkpoint) and the engine's settings.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/kv_cache_dtype.h"
#include "engine/model/weight_dtype.h"
#include "engine/spec_decode/speculative_config.h"

namespace pagedchat {

/// How rotary embedding pairs a head's dimensions: llama2.c / Meta / GGUF `llama` files rotate
/// interleaved pairs (2i, 2i+1) (llama.cpp's rope type NORM); Hugging Face checkpoints and GGUF
/// `qwen2` / `qwen3` files rotate halves (i, i + head_dim/2) ("neox" style, transformers'
/// rotate_half; llama.cpp's rope type NEOX).
enum class RopeStyle { kInterleaved, kNeox };

/// RoPE frequency scaling as Hugging Face's rope_scaling names it (transformers
/// modeling_rope_utils.py). Only the types this engine computes exactly are representable; loaders
/// refuse the others (dynamic, yarn, longrope, ...) by name.
enum class RopeScalingType {
  kNone,    ///< rope_type "default" / no rope_scaling
  kLinear,  ///< "linear": every inverse frequency divided by `factor` (position interpolation)
  kLlama3,  ///< "llama3": _compute_llama3_parameters (Llama 3.1 / 3.2 / 3.3)
  /// "yarn" (Peng et al. 2023, YaRN): per rotated pair, a ramp between the original frequency
  /// (fast-rotating pairs) and the frequency divided by `factor` (slow ones), as ggml's
  /// rope_yarn computes it (gpt-oss, Qwen3 long-context GGUFs); its attention-scale correction
  /// (mscale) lives in ModelConfig::rope_attn_factor. engine/model/rope_frequencies.h.
  kYarn,
};

/// The parameters of rope_scaling (config.json; see engine/model/rope_frequencies.h for the
/// formulas). Unused fields keep transformers' defaults.
struct RopeScaling {
  RopeScalingType type = RopeScalingType::kNone;
  double factor = 1.0;                          ///< linear, llama3 and yarn
  double low_freq_factor = 1.0;                 ///< llama3
  double high_freq_factor = 4.0;                ///< llama3
  int original_max_position_embeddings = 8192;  ///< llama3 and yarn: the pre-training context
  double beta_fast = 32.0;                      ///< yarn: rotations per context below which a pair extrapolates
  double beta_slow = 1.0;                       ///< yarn: ... above which it interpolates
  /// yarn: the correction range's ends rounded down / up to whole pairs (ggml and transformers'
  /// default; gpt-oss's config.json says truncate false).
  bool yarn_truncate = true;
};

/// The activation of a gated MLP: out = down(act(gate(x)) * up(x)).
enum class MlpActivation {
  kSilu,      ///< SwiGLU (Llama, Qwen, Phi-3, SmolLM3, EXAONE): silu(x) = x / (1 + exp(-x))
  kGeluTanh,  ///< GeGLU with the tanh approximation (Gemma; ggml_gelu, HF gelu_pytorch_tanh)
  /// gpt-oss's clamped SwiGLU: out = down((clamp(up, ±7) + 1) * g * sigmoid(1.702 g)), g = min(gate, 7)
  /// (transformers modeling_gpt_oss.py GptOssExperts; ggml's swiglu_oai).
  kSwigluOai,
};

/// The token mixer of a decoder layer: softmax attention over the paged KV cache, or a Gated
/// DeltaNet linear-attention layer with a fixed-size recurrent state per sequence (Qwen3-Next,
/// Qwen3.5 / 3.6: engine/model/layers/gated_delta_net.h).
enum class LayerMixer { kAttention, kGatedDeltaNet };

/// What one decoder layer is, where families differ layer by layer (vLLM's per-layer
/// KVCacheSpec plus the attention options that go with it). Built by the family's entry in the
/// registry (engine/model/arch/registry.h) from the file's keys and the family's rules.
struct LayerSpec {
  /// 0: full (global) attention. > 0: sliding-window attention: the query at position p attends
  /// keys at p - sliding_window < k <= p (the window counts the query's own token), as vLLM and
  /// llama.cpp mask Gemma's local layers. Layers with different windows get different KV-cache
  /// groups (engine/core/kv_cache_coordinator.h).
  int sliding_window = 0;
  /// false: no rotary embedding on this layer (NoPE: SmolLM3's every 4th layer, EXAONE 4's global
  /// layers); q and k are used as projected (and normalised).
  bool use_rope = true;
  /// RoPE base of this layer (Gemma 3: 10000 on local layers, rope.freq_base on global ones).
  double rope_theta = 10000.0;
  /// The config's frequency scaling (rope_scaling, rope_freq_factors) applies to this layer;
  /// false: plain theta^(-2i/d) (Gemma 3's local layers ignore the global layers' linear factor).
  bool rope_scaled = true;
  /// The feed-forward is a mixture of experts (ModelConfig::moe) instead of the dense gated MLP.
  bool moe = false;
  /// Attention, or a recurrent Gated DeltaNet layer (ModelConfig::linear_attn): such a layer
  /// has no KV cache; its state lives in a state slot per sequence (KVCache::state).
  LayerMixer mixer = LayerMixer::kAttention;
  bool is_recurrent() const { return mixer == LayerMixer::kGatedDeltaNet; }
  /// Per-head size of this layer's q, k and v; 0: ModelConfig::head_dim (Gemma 4's local layers:
  /// attention.key_length_swa).
  int head_dim = 0;
  /// KV heads of this layer; 0: ModelConfig::n_kv_heads (Gemma 4's per-layer head_count_kv).
  int n_kv_heads = 0;
  /// Leading dims of each head that rotate; 0: ModelConfig::rotary_dims() (Gemma 4's local layers:
  /// rope.dimension_count_swa).
  int rotary_dim = 0;
  /// Width of this layer's dense MLP; 0: ModelConfig::intermediate_size (Gemma 4's per-layer
  /// feed_forward_length: the shared-KV layers' double-wide MLP).
  int intermediate_size = 0;
  /// -1: the layer writes its own K and V. >= 0: it computes only q and attends over the K/V that
  /// earlier layer kv_source_layer (same window, heads and head size) wrote this step, and owns no
  /// KV cache (Gemma 4's attention.shared_kv_layers; vLLM's kv_sharing_target_layer_name).
  int kv_source_layer = -1;
  bool shares_kv() const { return kv_source_layer >= 0; }
  /// V is the layer's K projection: it has no V projection of its own (Gemma 4's
  /// attention_k_eq_v global layers; a GGUF file says so by leaving out attn_v, a Hugging Face
  /// config by this key, and the folder loader then refuses a v_proj there).
  bool k_eq_v = false;
  /// false: the layer has no feed-forward (x += attention only): the MTP block of Qwen3.5's
  /// smaller checkpoints (ik_llama.cpp's build_qwen35_mtp runs its FFN only when present).
  bool ffn = true;
};

/// The shape of the Gated DeltaNet layers (Yang et al. 2024, "Gated Delta Networks"; transformers
/// modeling_qwen3_next.py Qwen3NextGatedDeltaNet; GGUF ssm.* keys as llama.cpp names them). The
/// input projection gives q, k (num_k_heads heads of head_k_dim) and v (num_v_heads heads of
/// head_v_dim), which pass a causal depthwise conv1d of conv_kernel taps; each value head j
/// reads key head j % num_k_heads (GGUF files: the converter tiles the value heads), or j /
/// (num_v_heads / num_k_heads) with v_heads_grouped (Hugging Face checkpoints, which group them
/// by key head; the loader keeps their order). Per sequence and layer the state is the
/// conv's last conv_kernel - 1 inputs and, per value head, a [head_v_dim, head_k_dim] float32
/// matrix.
struct LinearAttentionConfig {
  int conv_kernel = 0;           ///< ssm.conv_kernel
  int num_k_heads = 0;           ///< ssm.group_count
  int num_v_heads = 0;           ///< ssm.time_step_rank
  int head_k_dim = 0;            ///< ssm.state_size
  int head_v_dim = 0;            ///< ssm.inner_size / num_v_heads
  bool v_heads_grouped = false;  ///< value heads grouped by key head (Hugging Face order)
  bool enabled() const { return num_v_heads > 0; }
  int key_dim() const { return num_k_heads * head_k_dim; }
  int value_dim() const { return num_v_heads * head_v_dim; }
  /// Channels of the conv: [q | k | v].
  int conv_dim() const { return 2 * key_dim() + value_dim(); }
  /// Floats of one layer's conv state: (conv_kernel - 1) x conv_dim, oldest first.
  std::size_t conv_state_floats() const { return std::size_t(conv_kernel - 1) * std::size_t(conv_dim()); }
  /// Floats of one layer's recurrent state: num_v_heads x head_v_dim x head_k_dim.
  std::size_t ssm_state_floats() const {
    return std::size_t(num_v_heads) * std::size_t(head_v_dim) * std::size_t(head_k_dim);
  }
  std::size_t state_floats() const { return conv_state_floats() + ssm_state_floats(); }
};

/// A mixture-of-experts feed-forward (Mixtral, Qwen3-MoE, later gpt-oss and Qwen3.5-MoE): a router
/// [num_experts, hidden] scores each token, the top num_experts_per_tok experts (each a gated MLP
/// of expert_intermediate_size) run and their outputs are summed with the routing weights.
/// Sources: transformers modeling_qwen3_moe.py (Qwen3MoeSparseMoeBlock), llama.cpp's
/// llm_build_moe_ffn.
struct MoeConfig {
  int num_experts = 0;
  int num_experts_per_tok = 0;
  int expert_intermediate_size = 0;
  /// Softmax over all experts' logits, then top-k (Qwen3-MoE, Mixtral); false: top-k of the
  /// logits, then softmax over the selected ones (gpt-oss). Equal weights after renormalising.
  bool softmax_before_topk = true;
  /// The selected weights are divided by their sum (Qwen3-MoE's norm_topk_prob).
  bool norm_topk_prob = true;
  /// A shared expert every token also runs (0 = none), with a per-token sigmoid gate
  /// (shared_expert_gate [hidden]) when shared_expert_gated (Qwen2-MoE, Qwen3.5-MoE).
  int shared_expert_intermediate_size = 0;
  bool shared_expert_gated = false;
  /// The router adds a bias to its logits and every expert's gate, up and down projections add
  /// biases (gpt-oss: ffn_gate_inp.bias, ffn_{gate,up,down}_exps.bias).
  bool biases = false;
  /// Gemma 4 26B-A4B: a MoE layer also runs its dense MLP beside the experts. The dense MLP reads
  /// rms_norm(x)·ffn_norm, the experts rms_norm(x)·pre_ffw_norm_2, the router rms_norm(x)·
  /// ffn_gate_inp.scale / sqrt(hidden); each expert's output is scaled by its ffn_down_exps.scale;
  /// the two outputs are RMS-normed apart (post_ffw_norm_1 / _2), summed, then post_ffw_norm'ed
  /// (transformers modeling_gemma4.py; ik_llama.cpp build_gemma4).
  bool parallel_dense = false;
  bool enabled() const { return num_experts > 0; }
};

/// Shape and options of a decoder-only transformer. What the families (Llama 2/3, Mistral,
/// Qwen2/2.5, Qwen3, Qwen3-MoE, Gemma 3, Phi-3/4-mini, SmolLM3, EXAONE 4) differ in is a field
/// here or in the per-layer specs, not a separate forward (see engine/model/decoder_model.h for
/// the computation and engine/model/arch/ for how each family fills this in). Names follow the
/// Hugging Face configs the loaders read (hidden_size, intermediate_size, ...).
struct ModelConfig {
  /// The family's GGUF name (general.architecture: "llama", "qwen2", "qwen3", "qwen3moe",
  /// "gemma3", "phi3", "smollm3", "exaone4"): the key of its entry in the model registry
  /// (engine/model/arch/registry.h), which knows everything else about it.
  std::string architecture = "llama";
  int hidden_size = 0;        ///< width of the residual stream
  int intermediate_size = 0;  ///< width of the dense gated MLP (0 when every layer is MoE)
  int n_layers = 0;
  int n_heads = 0;      ///< query heads
  int n_kv_heads = 0;   ///< key/value heads (grouped-query attention when < n_heads)
  int vocab_size = 0;   ///< embedding rows (may exceed the tokenizer's size by padding rows: Qwen)
  int max_seq_len = 0;  ///< max positions the model was trained with
  /// True when max_seq_len comes from metadata that may understate the trained context (GGUF,
  /// config.json): a larger max_model_len is then allowed with a warning, as vLLM allows.
  bool max_seq_len_is_soft = false;
  /// Per-head size of q, k and v; usually hidden_size / n_heads but independent of it (Qwen3: 128
  /// with hidden 1024 and 16 heads, so the q projection is n_heads * head_dim wide).
  int head_dim = 0;
  /// RoPE base of the layers whose LayerSpec does not set another (inv_freq_i = theta^(-2i / rotary_dim)).
  float rope_theta = 10000.0f;
  RopeStyle rope_style = RopeStyle::kInterleaved;
  /// Leading dims of each head that rotate (partial rotary: Phi-4-mini 96 of 128, HF
  /// partial_rotary_factor, GGUF rope.dimension_count); 0 = head_dim.
  int rotary_dim = 0;
  RopeScaling rope_scaling;  ///< Hugging Face rope_scaling (linear / llama3), applied to inv_freq
  /// GGUF `rope_freqs.weight` ([rotary_dim / 2] float32): llama.cpp's per-pair frequency divisors
  /// (ggml_rope_ext freq_factors; convert_hf_to_gguf.py writes Llama 3.1's scaling and Phi-3's
  /// LongRoPE factors this way): inv_freq_i is divided by rope_freq_factors[i]. Empty = none.
  std::vector<float> rope_freq_factors;
  /// LongRoPE (Phi-3 / Phi-4-mini rope_factors_long): the divisors for contexts longer than
  /// rope_long_threshold positions (rope.scaling.original_context_length). The engine uses them in
  /// place of rope_freq_factors when its max_model_len exceeds the threshold (llama.cpp's choice
  /// by context size; use_long_rope_factors()). Empty = none.
  std::vector<float> rope_freq_factors_long;
  int rope_long_threshold = 0;
  /// Multiplies the attention scores of every layer that rotates with the scaled frequencies
  /// (LayerSpec::use_rope and rope_scaled) on top of attention_scale: LongRoPE's attention factor
  /// or YaRN's mscale, squared (llama.cpp scales cos/sin of q and k by it). 1 = none.
  float rope_attn_factor = 1.0f;
  float norm_eps = 1e-5f;
  /// Scale of the attention scores; 0 = 1 / sqrt(head_dim) (Gemma 3 27B: query_pre_attn_scalar).
  float attention_scale = 0.0f;
  /// The token embeddings are multiplied by this before the first layer (Gemma: sqrt(hidden_size)); 1 = none.
  float embedding_scale = 1.0f;
  /// > 0: logits = c * tanh(logits / c) (Gemma 2 / 4 final_logit_softcapping); 0 = none.
  float final_logit_softcap = 0.0f;
  MlpActivation activation = MlpActivation::kSilu;
  /// Norm placement: pre_norm (attn_norm before attention, ffn_norm before the MLP: Llama and
  /// most) and / or post_norm (post_attention_norm / post_ffw_norm on each block's output before
  /// the residual add: Gemma 2/3 "sandwich" with both, EXAONE 4 with post only).
  bool pre_norm = true;
  bool post_norm = false;
  /// q, k and v projections add a bias (Qwen2 always; Llama with attention_bias). A bias missing
  /// from a GGUF file of a family where it is optional counts as zero.
  bool attention_qkv_bias = false;
  /// The output projection adds a bias (Llama's attention_bias, Qwen3's attention_bias).
  bool attention_out_bias = false;
  /// RMSNorm over each head of q and of k (weights [head_dim], eps norm_eps) right after the
  /// projections (and biases), before RoPE (Qwen3, Gemma 3, EXAONE 4).
  bool qk_norm = false;
  /// Attention sinks (gpt-oss attn_sinks): a learned logit per query head joins each softmax
  /// (kernels::AttentionSpec::sinks).
  bool attention_sinks = false;
  /// Attention output gate (Qwen3.5 / Qwen3-Next gated attention): the q projection gives, per
  /// head, head_dim query values then head_dim gate values; the attention output of each head is
  /// multiplied by sigmoid(gate) before o_proj.
  bool attn_output_gate = false;
  /// A weightless RMSNorm over each V head before the cache (Gemma 4: v = v / rms(v), eps norm_eps).
  bool v_norm = false;
  /// Interleaved multi-section RoPE (Qwen3-VL's M-RoPE; transformers apply_interleaved_mrope):
  /// rotated pair i takes its position from the image grid's height (h) when i % 3 == 1 and
  /// i < 3 * mrope_sections[1], its width (w) when i % 3 == 2 and i < 3 * mrope_sections[2], else
  /// the temporal position (t). Text positions are (p, p, p): plain RoPE. All 0: no M-RoPE.
  std::array<int, 3> mrope_sections{};
  /// Deepstack (Qwen3-VL): an image token's input row carries hidden_size * (1 + deepstack_layers)
  /// floats; feature k (after the embedding) is added to that token's residual stream after
  /// layer k. 0 = none.
  int deepstack_layers = 0;
  /// Per-layer embeddings (Gemma 4 E2B / E4B embedding_length_per_layer_input; 0 = none): each
  /// token gets per_layer_input_size values per layer from ModelWeights::per_layer_token_embd and
  /// a projection of its scaled embedding, which each layer mixes in after its MLP
  /// (engine/model/decoder_model.h).
  int per_layer_input_size = 0;
  /// The token whose per-layer embedding (per_layer_input_size) a position fed an embedding (an
  /// image's) takes: transformers' Gemma4Model looks the row up at text_config.pad_token_id for
  /// multimodal positions (0 in Gemma 4's vocabulary; GGUF: tokenizer.ggml.padding_token_id).
  int per_layer_embed_pad_id = 0;
  /// Whether an image's tokens attend to each other both ways (Gemma 3; transformers Gemma 4's
  /// use_bidirectional_attention "vision"). Unset: the projector's rule.
  std::optional<bool> bidirectional_images;
  /// Gated DeltaNet layers' shape (LayerSpec::mixer); disabled when no layer is recurrent.
  LinearAttentionConfig linear_attn;
  /// Multi-token-prediction blocks after the main stack (GGUF nextn_predict_layers): loaded and
  /// kept for speculative decoding, not part of the n_layers the forward runs.
  int nextn_predict_layers = 0;
  /// One spec per layer ([n_layers]); an empty list means every layer is the default LayerSpec
  /// with rope_theta (see layer()).
  std::vector<LayerSpec> layer_specs;
  MoeConfig moe;
  bool shared_classifier = true;  ///< output projection tied to the token embedding
  int bos_id = 1;
  int eos_id = 2;
  /// Further ids that also end a sequence, besides eos_id (Hugging Face configs may list several
  /// eos_token_id values: the first becomes eos_id, the rest land here). Empty for most models.
  std::vector<int> extra_eos_ids;
  bool add_bos = true;      ///< prepend BOS to text prompts (tokenizer_config add_bos_token, GGUF add_bos_token)
  bool stop_on_bos = true;  ///< llama2.c checkpoints: a generated BOS ends the sequence (as run.c does)

  /// Layer l's spec: layer_specs[l], or a full-attention dense layer with rope_theta when the
  /// list is empty.
  LayerSpec layer(int l) const {
    if (!layer_specs.empty()) return layer_specs.at(std::size_t(l));
    LayerSpec s;
    s.rope_theta = rope_theta;
    return s;
  }
  /// Makes the per-layer specs explicit: n_layers copies of layer(0) (the default spec with
  /// rope_theta when the list is empty), for a family's rules to change layer by layer.
  void expand_layer_specs() { layer_specs.assign(std::size_t(n_layers), layer(0)); }
  /// Switches to the LongRoPE long factors when `context` exceeds rope_long_threshold (no-op
  /// without them).
  void use_long_rope_factors(int context) {
    if (!rope_freq_factors_long.empty() && context > rope_long_threshold) rope_freq_factors = rope_freq_factors_long;
  }
  /// Dims rotated by RoPE (rotary_dim, or head_dim when 0).
  int rotary_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  /// Layer l's head size, KV heads, rotated dims and dense MLP width (its LayerSpec's, else the
  /// model's).
  int layer_head_dim(int l) const { return layer(l).head_dim > 0 ? layer(l).head_dim : head_dim; }
  int layer_kv_heads(int l) const { return layer(l).n_kv_heads > 0 ? layer(l).n_kv_heads : n_kv_heads; }
  int layer_rotary_dim(int l) const { return layer(l).rotary_dim > 0 ? layer(l).rotary_dim : rotary_dims(); }
  int layer_intermediate_size(int l) const {
    return layer(l).intermediate_size > 0 ? layer(l).intermediate_size : intermediate_size;
  }
  /// Elements of one token's K (or V) row in the KV cache: the widest n_kv_heads x head_dim of the
  /// layers that write K/V (every layer's row has this stride; narrower layers leave the rest unused).
  int kv_cache_width() const {
    int w = 0;
    for (int l = 0; l < n_layers; ++l)
      if (!layer(l).is_recurrent() && !layer(l).shares_kv()) w = std::max(w, layer_kv_heads(l) * layer_head_dim(l));
    return w > 0 ? w : n_kv_heads * head_dim;
  }
  /// Layers with a recurrent state (Gated DeltaNet).
  int num_recurrent_layers() const {
    int n = 0;
    for (const LayerSpec& s : layer_specs) n += s.is_recurrent();
    return n;
  }
  /// Floats of one sequence's recurrent state over every recurrent layer (0: none).
  std::size_t recurrent_state_floats() const {
    return std::size_t(num_recurrent_layers()) * linear_attn.state_floats();
  }
  /// True when some layer uses a sliding window.
  bool has_sliding_window() const {
    for (const LayerSpec& s : layer_specs)
      if (s.sliding_window > 0) return true;
    return false;
  }
};

/// Which waiting request the scheduler admits first (vLLM's --scheduling-policy "fcfs" /
/// "priority"): arrival order, or the lowest priority value (then arrival order).
enum class SchedulingPolicy { kFcfs, kPriority };

/// Engine settings (vLLM's EngineArgs, trimmed to what this engine uses).
struct EngineConfig {
  std::string model;        ///< a GGUF file, a Hugging Face folder, or a llama2.c .bin (model_loader.h)
  std::string tokenizer{};  ///< optional explicit sentencepiece .model
  /// The image projector to load beside the model (llama.cpp's `mmproj-*.gguf`;
  /// engine/vision/vision_encoder.h): requests may then carry images. Empty: text only.
  std::string mmproj{};
  /// Tokens an image may become for encoders that keep its aspect (Qwen3-VL, Gemma 4;
  /// VisionOptions): 0 = the projector file's limits, else the type's defaults.
  int image_min_tokens = 0, image_max_tokens = 0;
  /// Whether a Gemma 4 model's image tokens attend to each other both ways; unset: the model's
  /// rule (ModelConfig::bidirectional_images — a GGUF file does not say, see gemma4.cpp).
  std::optional<bool> image_bidirectional{};
  int block_size = 16;             ///< tokens per KV-cache block
  std::size_t kv_cache_bytes = 0;  ///< KV-cache memory (all layers, K and V); 0 = room for 8 full-length sequences
  int num_blocks = 0;              ///< explicit KV block count; overrides kv_cache_bytes when > 0
  int max_num_seqs = 64;           ///< most requests running at once
  /// Recurrent state slots of a hybrid model (Qwen3.5's Gated DeltaNet layers; one per running
  /// sequence, one rolling checkpoint each, the rest cached checkpoints for prefix caching);
  /// 0 = automatic (2 * max_num_seqs + 16, within an eighth of the machine's memory). Fewer
  /// than 2 * max_num_seqs lowers max_num_seqs to what they hold.
  int num_state_slots = 0;
  int max_num_batched_tokens = 512;      ///< token budget of one step (prefill chunks + decodes)
  int max_model_len = 0;                 ///< 0 = the model's max_seq_len; may not exceed it
  int num_threads = 0;                   ///< CPU threads for the forward; 0 = hardware concurrency
  bool enable_prefix_caching = true;     ///< reuse KV blocks of identical prompt prefixes
  int long_prefill_token_threshold = 0;  ///< most prompt tokens one request prefills per step; 0 = no cap
  SchedulingPolicy scheduling_policy = SchedulingPolicy::kFcfs;
  /// Type of the weight matrices (vLLM's --dtype; text names: weight_dtype_name(),
  /// parse_weight_dtype()): kAuto keeps each matrix in its file's type (F32, F16, BF16, or a GGUF
  /// quantization such as Q4_K: quantized weights stay quantized and are computed on with integer
  /// dot products); kFloat32 dequantizes every matrix to float32 (4 bytes per weight, the exact
  /// reference); kBFloat16 / kFloat16 store the unquantized matrices in that type (quantized ones
  /// stay). Activations are float32 (int8 per 32 values for the quantized dot products).
  WeightDType dtype = WeightDType::kAuto;
  /// Element type of the KV cache (vLLM's --kv-cache-dtype; text names: kv_cache_dtype_name(),
  /// parse_kv_cache_dtype()). kAuto is bfloat16: half the bytes per block of float32, so the same
  /// kv_cache_bytes holds twice the tokens. K and V are rounded to nearest even when written
  /// (kQ8_0: quantized per 32 values, ggml's block_q8_0, 1.0625 bytes per value; only for head
  /// sizes that are multiples of 32) and attention computes in float32 on the widened values.
  /// After construction, the engine's config holds the resolved type (kAuto reads kBFloat16).
  KvCacheDType kv_cache_dtype = KvCacheDType::kAuto;
  /// Where the forward runs (vLLM's --device): "cpu", "cuda" (= "cuda:0"), "cuda:N", or "auto"
  /// (CUDA when its library loads and a device is present, else the CPU; the choice is printed).
  /// A CUDA device that is not there is an error saying why. On a GPU, weights are 16-bit under
  /// dtype "auto" (float32 matrices become bfloat16; quantized GGUF types are dequantized to
  /// bfloat16 at load), activations float32, GEMMs cuBLAS with float32 accumulation.
  std::string device = "cpu";
  /// Fraction of the GPU's memory the engine may use (vLLM's gpu_memory_utilization): weights,
  /// the activations of the largest step (measured by a profiling pass at load) and, in what is
  /// left of that fraction, the KV cache (when neither num_blocks nor kv_cache_bytes is set).
  double gpu_memory_utilization = 0.9;
  /// Host memory this model's weights and KV cache may take together, in bytes (0 = no limit
  /// beyond the automatic cache's share of physical memory); the CPU backend only. The app sets
  /// it when a model loads beside others (what /proc/meminfo's MemAvailable leaves). The KV cache
  /// (automatic or configured) is lowered to what the budget leaves after the weights
  /// (DecoderModel::packed_bytes()), with a warning when a configured size is lowered; below one
  /// max_model_len sequence's blocks the load fails, naming the numbers.
  std::size_t host_memory_budget = 0;
  /// Speculative decoding (vLLM's --speculative-config; engine/spec_decode/): draft tokens
  /// proposed per running request and verified in the next step. Method kNone: off.
  SpeculativeConfig speculative_config{};
  /// No CUDA graphs for decode steps (vLLM's enforce_eager); every kernel is launched eagerly.
  bool enforce_eager = false;
  /// Called during loading with (bytes read, total bytes) of the weight files, from the loading
  /// thread; may be empty.
  std::function<void(std::uint64_t, std::uint64_t)> load_progress{};
  /// Called with each warning of the engine's construction (a max_model_len above the positions
  /// in the model's metadata, ...): one English sentence without a trailing newline, from the
  /// constructing thread. Empty: the warning goes to stderr as "pagedchat: warning: ...".
  std::function<void(const std::string&)> on_warning{};
};

}  // namespace pagedchat
