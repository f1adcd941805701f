// Follows the grouping of vLLM v1's kv_cache_utils.py (_get_kv_cache_groups_uniform_page_size;
// Apache-2.0; THIRD_PARTY_NOTICES).
#include "engine/core/kv_cache_groups.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/config.h"

namespace pagedchat {

KVCacheGroups KVCacheGroups::from_sliding_windows(const std::vector<int>& windows) {
  KVCacheGroups out;
  if (windows.empty()) {  // no layers: one empty full-attention group, no tensors
    out.groups.emplace_back();
    return out;
  }
  // Buckets of layers by spec: full attention first, then each window in order of appearance.
  std::vector<int> specs;  // sliding window of each bucket
  std::vector<std::vector<int>> buckets;
  if (std::find(windows.begin(), windows.end(), 0) != windows.end()) {
    specs.push_back(0);
    buckets.emplace_back();
  }
  for (std::size_t l = 0; l < windows.size(); ++l) {
    const int w = windows[l];
    if (w < 0) throw std::invalid_argument("layer " + std::to_string(l) + " has a negative sliding window");
    auto it = std::find(specs.begin(), specs.end(), w);
    if (it == specs.end()) {
      specs.push_back(w);
      buckets.emplace_back();
      it = specs.end() - 1;
    }
    buckets[std::size_t(it - specs.begin())].push_back(int(l));
  }
  int fewest = int(windows.size()), most = 0;
  for (const auto& b : buckets) {
    fewest = std::min(fewest, int(b.size()));
    most = std::max(most, int(b.size()));
  }
  // vLLM's rule: the "1" of an n:1 pattern; counts close to each other pad the smaller instead.
  out.group_size = 2 * most < 3 * fewest ? most : fewest;
  out.layer_group.assign(windows.size(), 0);
  out.layer_tensor.assign(windows.size(), 0);
  for (std::size_t s = 0; s < buckets.size(); ++s) {
    const std::vector<int>& layers = buckets[s];
    const int n = (int(layers.size()) + out.group_size - 1) / out.group_size;
    for (int i = 0; i < n; ++i) {
      KVCacheGroupSpec g;
      g.sliding_window = specs[s];
      for (std::size_t j = std::size_t(i); j < layers.size(); j += std::size_t(n)) {
        out.layer_group[std::size_t(layers[j])] = out.num_groups();
        out.layer_tensor[std::size_t(layers[j])] = int(g.layers.size());
        g.layers.push_back(layers[j]);
      }
      out.groups.push_back(std::move(g));
    }
  }
  return out;
}

KVCacheGroups KVCacheGroups::of(const ModelConfig& c) {
  // Recurrent (Gated DeltaNet) layers hold no KV: the groups are those of the attention layers,
  // and a recurrent layer's group and tensor are -1 (its state: KVCache::state). A layer that
  // reads another layer's KV (LayerSpec::kv_source_layer) owns none either: it gets its source's
  // group and tensor.
  std::vector<int> windows, attention_layers;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerSpec s = c.layer(l);
    if (s.is_recurrent()) continue;
    if (s.shares_kv()) {
      const int src = s.kv_source_layer;
      const std::string at = "layer " + std::to_string(l) + " reads the KV of layer " + std::to_string(src);
      if (src >= l) throw std::invalid_argument(at + ", which is not an earlier layer");
      const LayerSpec from = c.layer(src);
      if (from.is_recurrent() || from.shares_kv()) throw std::invalid_argument(at + ", which writes no KV of its own");
      if (from.sliding_window != s.sliding_window || c.layer_kv_heads(src) != c.layer_kv_heads(l) ||
          c.layer_head_dim(src) != c.layer_head_dim(l))
        throw std::invalid_argument(at + ", whose window, KV heads or head size differ");
      continue;
    }
    windows.push_back(s.sliding_window);
    attention_layers.push_back(l);
  }
  KVCacheGroups g = from_sliding_windows(windows);
  if (int(attention_layers.size()) == c.n_layers) return g;
  std::vector<int> group(std::size_t(std::max(0, c.n_layers)), -1), tensor(group.size(), -1);
  for (std::size_t i = 0; i < attention_layers.size(); ++i) {
    group[std::size_t(attention_layers[i])] = g.layer_group[i];
    tensor[std::size_t(attention_layers[i])] = g.layer_tensor[i];
  }
  for (int l = 0; l < c.n_layers; ++l)
    if (const LayerSpec s = c.layer(l); !s.is_recurrent() && s.shares_kv()) {
      group[std::size_t(l)] = group[std::size_t(s.kv_source_layer)];
      tensor[std::size_t(l)] = tensor[std::size_t(s.kv_source_layer)];
    }
  for (KVCacheGroupSpec& spec : g.groups)
    for (int& l : spec.layers) l = attention_layers[std::size_t(l)];
  g.layer_group = std::move(group);
  g.layer_tensor = std::move(tensor);
  return g;
}

KVCacheGroups KVCacheGroups::single(int n_layers) {
  return from_sliding_windows(std::vector<int>(std::size_t(std::max(0, n_layers)), 0));
}

bool KVCacheGroups::has_sliding_window() const {
  for (const auto& g : groups)
    if (g.is_sliding()) return true;
  return false;
}

int KVCacheGroups::num_full_layers() const {
  int n = 0;
  for (const auto& g : groups) n += g.is_sliding() ? 0 : int(g.layers.size());
  return n;
}

int KVCacheGroups::num_sliding_layers() const {
  int n = 0;
  for (const auto& g : groups) n += g.is_sliding() ? int(g.layers.size()) : 0;
  return n;
}

long long KVCacheGroups::max_blocks_per_request(long long num_tokens, int block_size, int max_step_tokens) const {
  auto blocks = [&](long long tokens) { return (tokens + block_size - 1) / block_size; };
  const long long full = blocks(num_tokens);
  long long total = 0;
  for (const auto& g : groups)
    total += g.is_sliding() ? std::min(full, blocks(g.sliding_window - 1 + (long long)max_step_tokens) + 1) : full;
  return total;
}

std::string KVCacheGroups::describe() const {
  std::string s = std::to_string(num_groups()) + (num_groups() == 1 ? " group of " : " groups of ") +
                  std::to_string(group_size) + (group_size == 1 ? " layer: " : " layers: ");
  // Runs of groups with the same spec ("6 sliding window 512").
  int padding = 0;
  for (std::size_t i = 0; i < groups.size();) {
    std::size_t j = i;
    while (j < groups.size() && groups[j].sliding_window == groups[i].sliding_window) {
      padding += group_size - int(groups[j].layers.size());
      ++j;
    }
    if (i > 0) s += ", ";
    if (num_groups() > 1) s += std::to_string(j - i) + " ";
    s += groups[i].is_sliding() ? "sliding window " + std::to_string(groups[i].sliding_window) : "full attention";
    i = j;
  }
  if (padding > 0) s += " (" + std::to_string(padding) + (padding == 1 ? " padding layer)" : " padding layers)");
  return s;
}

}  // namespace pagedchat
