// What the vision tests share: outside goldens (a JSON index over one float32 file), float
// comparison, greedy decoding of an image prompt, and the "ids to the first near-tie" check.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine_test_utils.h"

namespace visiontest {

/// A golden: `name.json` indexes `name.f32` (little-endian float32) with {"offset", "count"} pairs.
struct Golden {
  nlohmann::json j;
  std::vector<float> f32;

  /// The floats at a {"offset", "count"} entry; throws std::out_of_range past the file's end.
  std::vector<float> block(const nlohmann::json& at) const {
    const std::size_t off = at["offset"], n = at["count"];
    if (off + n > f32.size()) throw std::out_of_range("golden block past the end of its .f32 file");
    return {f32.begin() + std::ptrdiff_t(off), f32.begin() + std::ptrdiff_t(off + n)};
  }

  /// The entry of j["images"] whose "image" is `name`; throws std::runtime_error if none.
  const nlohmann::json& image(const std::string& name) const {
    for (const auto& im : j["images"])
      if (im["image"] == name) return im;
    throw std::runtime_error("no golden image " + name);
  }
};

/// Reads `stem.json` and the whole of `stem.f32`; throws std::runtime_error when either is missing.
inline Golden loadGolden(const std::string& stem) {
  Golden g;
  std::ifstream js(stem + ".json");
  if (!js) throw std::runtime_error("cannot read " + stem + ".json");
  g.j = nlohmann::json::parse(js);
  std::ifstream bin(stem + ".f32", std::ios::binary | std::ios::ate);
  if (!bin) throw std::runtime_error("cannot read " + stem + ".f32");
  g.f32.resize(std::size_t(bin.tellg()) / sizeof(float));
  bin.seekg(0);
  bin.read(reinterpret_cast<char*>(g.f32.data()), std::streamsize(g.f32.size() * sizeof(float)));
  return g;
}

/// max |a - b| over equal-length vectors; infinity when the lengths differ.
inline double maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

/// Runs `prompt` (ids + image placeholders) greedily for `n` tokens alone on `engine`; the
/// generated ids, and in *cached the prompt tokens the prefix cache supplied.
inline std::vector<int> greedyIds(pagedchat::LLMEngine& engine, const std::string& id,
                                  const pagedchat::ImagePrompt& prompt, int n, int* cached = nullptr) {
  pagedchat::RequestOptions o;
  o.images = prompt.images;
  engine.add_request(id, prompt.token_ids, testutil::greedy(n), o);
  auto done = testutil::runToCompletion(engine);
  if (cached) *cached = done.at(id).num_cached_tokens;
  return done.at(id).outputs.at(0).token_ids;
}

/// How greedy ids compare with a golden's steps ([{"id", "top10": [[id, logit], ...]}, ...]).
struct NearTieCheck {
  int checked = 0;    ///< steps compared before the first near-tie (or the end)
  int mismatch = -1;  ///< the first step whose id differs, or -1
  std::string why() const { return "greedy id differs at step " + std::to_string(mismatch); }
};

/// Compares `ids` with the golden's steps up to the first step whose top-2 logits are closer
/// than `gap` (there either id is right, and so is anything after it).
inline NearTieCheck compareToNearTie(const std::vector<int>& ids, const nlohmann::json& steps, double gap = 1e-3) {
  NearTieCheck c;
  for (std::size_t s = 0; s < steps.size() && s < ids.size(); ++s) {
    const auto& top = steps[s]["top10"];
    if (double(top[0][1]) - double(top[1][1]) < gap) break;
    if (ids[s] != int(steps[s]["id"])) {
      c.mismatch = int(s);
      break;
    }
    ++c.checked;
  }
  return c;
}

}  // namespace visiontest
