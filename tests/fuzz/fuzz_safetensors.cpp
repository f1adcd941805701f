// libFuzzer target for the safetensors parser (engine/loader/hf/safetensors.cpp) and the Hugging Face
// JSON config parsers (engine/loader/hf/hf_config.cpp). Any input must give either tensors whose byte
// ranges lie inside the input and do not overlap, or a std::runtime_error; never a crash, a leak
// or an out-of-bounds read (built with -fsanitize=fuzzer,address,undefined).
//
// Inputs starting with '{' are taken as the JSON header itself: the fuzzer wraps them in a
// well-formed file (length prefix + header + 256 data bytes) so it reaches the per-tensor checks
// quickly; they also go through parse_hf_config / parse_tokenizer_config /
// parse_generation_config. Other inputs are parsed as whole files.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/loader/hf/hf_config.h"
#include "engine/loader/hf/safetensors.h"

namespace {

void check_file(const uint8_t* data, std::size_t size) {
  std::map<std::string, pagedchat::StTensor> tensors;
  try {
    tensors = pagedchat::parse_safetensors(data, size, "fuzz.safetensors");
  } catch (const std::runtime_error&) {
    return;
  }
  std::vector<std::pair<const uint8_t*, uint64_t>> ranges;
  for (const auto& [name, t] : tensors) {
    if (t.data < data || t.nbytes > size || t.data + t.nbytes > data + size) std::abort();  // range left the input
    if (t.nbytes != t.num_elements * pagedchat::dtype_size(t.dtype)) std::abort();
    if (t.nbytes > 0) ranges.emplace_back(t.data, t.nbytes);
    if (pagedchat::supported(t.dtype) && t.num_elements <= size) {
      std::vector<float> out(t.num_elements);
      pagedchat::to_float32(t, out.data());  // reads every byte of the range
    }
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].first + ranges[i - 1].second) std::abort();  // overlap let through
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size > 0 && data[0] == '{') {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
      pagedchat::parse_hf_config(text, "config.json");
    } catch (const std::runtime_error&) {
    }
    try {
      pagedchat::parse_tokenizer_config(text, "tokenizer_config.json");
    } catch (const std::runtime_error&) {
    }
    try {
      pagedchat::parse_generation_config(text, "generation_config.json");
    } catch (const std::runtime_error&) {
    }
    std::vector<uint8_t> file(8 + size + 256);
    for (int i = 0; i < 8; ++i) file[i] = uint8_t(uint64_t(size) >> (8 * i));
    std::copy(data, data + size, file.begin() + 8);
    for (std::size_t i = 0; i < 256; ++i) file[8 + size + i] = uint8_t(i * 37);
    check_file(file.data(), file.size());
    return 0;
  }
  check_file(data, size);
  return 0;
}
