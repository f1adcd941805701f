// KV-cache groups: how a model's layers share block tables (vLLM v1's hybrid KV-cache manager,
// kv_cache_utils.py's grouping of layers by KVCacheSpec).
//
// Layers with the same KV spec (full attention, or a sliding window of W tokens) can share one block
// table per request: they hold the same positions. Layers of different specs cannot (a sliding
// layer frees what a full layer still needs). So the layers are split into groups, every group of
// one spec, and every group the same size, group_size: the fewest layers of one spec (vLLM's
// choice for the n:1 patterns of Gemma 3, 5 local : 1 global, and Llama 4, 3 local : 1 global), or
// the most when the counts are within 1.5x of each other. A spec's layers go round-robin into
// ceil(count / group_size) groups (layers[i::num_groups]), the last ones short by the padding.
//
// All groups allocate from ONE BlockPool. The KV cache holds group_size K tensors and group_size V
// tensors of num_blocks blocks; the i-th layer of each group uses tensor i. A block id given to a
// group therefore holds that block for the group's (up to) group_size layers, and one block id
// costs group_size layers' worth of memory. A model with one spec (a plain Llama) is one group of
// all its layers: one tensor per layer, exactly the cache it had before groups existed.
//
// Group order: full-attention groups first (so group 0 is a full group whenever the model has one;
// ForwardBatch's own tables are group 0's), then the sliding groups, by window in the order the
// windows first appear in the layers.
#pragma once

#include <string>
#include <vector>

namespace pagedchat {

struct ModelConfig;

/// One group: layers of one KV spec sharing a block table per request.
struct KVCacheGroupSpec {
  int sliding_window = 0;   ///< 0: full attention; W > 0: the query at p sees keys p - W < k <= p
  std::vector<int> layers;  ///< ascending; layers[i] uses the cache's tensor i (fewer than group_size: padding)
  bool is_sliding() const { return sliding_window > 0; }
};

struct KVCacheGroups {
  std::vector<KVCacheGroupSpec> groups;
  int group_size = 0;             ///< K (and V) tensors of the cache: the largest group's layer count
  std::vector<int> layer_group;   ///< [n_layers] group of each layer (-1: a recurrent layer, no KV)
  std::vector<int> layer_tensor;  ///< [n_layers] index of each layer within its group = its tensor (-1: none)

  /// The groups of a model whose layer l has sliding window windows[l] (0 = full attention).
  /// No layers: one empty full-attention group (group_size 0). Throws std::invalid_argument for a
  /// negative window.
  static KVCacheGroups from_sliding_windows(const std::vector<int>& windows);
  /// The groups of `config` (ModelConfig::layer(l).sliding_window for every attention layer;
  /// recurrent layers belong to no group; a layer that reads another's KV, LayerSpec::
  /// kv_source_layer, is in its source's group and uses its tensor, but is not in its `layers`).
  /// Throws std::invalid_argument when a KV source is not an earlier layer with its own KV of the
  /// same window, heads and head size.
  static KVCacheGroups of(const ModelConfig& config);
  /// One full-attention group of n_layers layers (a model without sliding windows).
  static KVCacheGroups single(int n_layers);

  int num_groups() const { return int(groups.size()); }
  int num_layers() const { return int(layer_group.size()); }
  bool has_sliding_window() const;
  /// Layers of the model in sliding-window groups / full-attention groups.
  int num_sliding_layers() const;
  int num_full_layers() const;
  /// Block ids one request needs at most, over all groups, when its sequence reaches num_tokens
  /// tokens and a step computes at most max_step_tokens of them: a full group holds every block,
  /// a sliding group only those the window of the step's first token reaches back to and the
  /// step's own, ceil((W - 1 + max_step_tokens) / block_size) + 1 (never more than a full group).
  long long max_blocks_per_request(long long num_tokens, int block_size, int max_step_tokens) const;
  /// "1 group" words for logs: e.g. "7 groups of 4 layers: 1 full attention, 6 sliding window 512
  /// (2 padding layers)", or "1 group of 6 layers: full attention".
  std::string describe() const;
};

}  // namespace pagedchat
