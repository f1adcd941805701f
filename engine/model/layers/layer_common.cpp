#include "engine/model/layers/layer_common.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace pagedchat::layers {

std::unique_ptr<kernels::PackedWeights> WeightPacker::pack(std::initializer_list<Part> parts, int k,
                                                           const std::string& where) {
  return pack(std::span<const Part>(parts.begin(), parts.size()), k, where);
}

std::unique_ptr<kernels::PackedWeights> WeightPacker::pack(std::span<const Part> parts, int k,
                                                           const std::string& where) {
  std::vector<kernels::WeightPart> wp;
  const char* previous = nullptr;
  for (const Part& p : parts) {
    const kernels::DType file = p.tensor.dtype;
    const int be = kernels::dtype_block_elems(file);
    if (k % be != 0)
      throw std::invalid_argument(where + p.name + " is " + kernels::dtype_name(file) + " with rows of " +
                                  std::to_string(k) + " values, not a whole number of its " + std::to_string(be) +
                                  "-value blocks");
    const kernels::DType as = dtype_ == WeightDType::kAuto ? ops_.auto_weight_type(file) : packed_dtype(file, dtype_);
    wp.push_back({p.tensor.data, p.rows, file, as});
    // Consecutive parts of one name (a matrix packed as row ranges) count as one matrix.
    if (!previous || std::string_view(previous) != p.name) ++type_counts_[kernels::dtype_name(as)];
    previous = p.name;
  }
  auto packed = ops_.pack_weights(wp, k, packed_);  // the file's pages go band by band
  if (packed_)
    for (const Part& p : parts) packed_(p.tensor.data, p.tensor.bytes(std::size_t(p.rows) * k));
  return packed;
}

std::string WeightPacker::type_summary() const {
  std::vector<std::pair<std::string, int>> counts(type_counts_.begin(), type_counts_.end());
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [name, n] : counts) s += (s.empty() ? "" : ", ") + name + " x " + std::to_string(n);
  return s;
}

}  // namespace pagedchat::layers
