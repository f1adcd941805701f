// What the vision tests share: outside goldens (a JSON index over one float32 file), float
// comparison, greedy decoding of an image prompt, and the "ids to the first near-tie" check.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/text/tokenizer.h"
#include "engine/vision/vision_encoder.h"
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

/// The recipe of tests/data/vision/qwen3vl(moe)/README.md: the GGUF at `src` with its
/// architecture `from` renamed `to` (and every `from.*` key `to.*`, same type, value and order),
/// `to.rope.dimension_sections` (INT32s) and `to.n_deepstack_layers` appended; tensors copied.
inline void deriveVlTextModel(const std::string& src, const std::string& from, const std::string& to,
                              const std::vector<int32_t>& sections, uint32_t deepstack, const std::string& dst) {
  pagedchat::GgufFile f = pagedchat::GgufFile::open(src);
  pagedchat::GgufMetaWriter meta;
  for (const auto& [k, v] : f.metadata()) {
    if (k == "general.alignment") continue;
    if (k == "general.architecture")
      meta.kv_str(k, to);
    else if (k.rfind(from + ".", 0) == 0)
      meta.kv_value(to + "." + k.substr(from.size() + 1), v);
    else
      meta.kv_value(k, v);
  }
  meta.kv_i32s(to + ".rope.dimension_sections", sections);
  meta.kv_u32(to + ".n_deepstack_layers", deepstack);
  std::vector<pagedchat::GgufTensorOut> out;
  for (const pagedchat::GgufTensorInfo& t : f.tensors()) out.push_back(pagedchat::gguf_tensor_copy(f, t));
  pagedchat::write_gguf_file(dst, meta, out);
}

/// A golden prompt ({"prompt" with mtmd's "<__media__>" markers, "images": file names in
/// `imageDir`}) as the engine lays it out: each image between the encoder's begin and end text,
/// the text tokenized with `bos` first (-1: none).
inline pagedchat::ImagePrompt goldenImagePrompt(const pagedchat::LLMEngine& engine, const nlohmann::json& p,
                                                const std::string& imageDir, int bos) {
  std::string text = p["prompt"];
  const std::string marker = "<__media__>";
  for (std::size_t at; (at = text.find(marker)) != std::string::npos;)
    text.replace(at, marker.size(), pagedchat::kImageMarker);
  pagedchat::TemplatedText t;
  t.append(text, false);
  std::vector<std::shared_ptr<const pagedchat::RgbImage>> images;
  for (const auto& name : p["images"])
    images.push_back(std::make_shared<const pagedchat::RgbImage>(
        pagedchat::decode_image_file(imageDir + "/" + name.get<std::string>())));
  return pagedchat::encode_image_prompt(engine.tokenizer(), *engine.vision_encoder(), t, images, bos,
                                        pagedchat::image_placeholder_id(engine.tokenizer()));
}

/// goldenImagePrompt for a Qwen encoder: no BOS, each image between <|vision_start|> and
/// <|vision_end|>.
inline pagedchat::ImagePrompt qwenImagePrompt(const pagedchat::LLMEngine& engine, const nlohmann::json& p,
                                              const std::string& imageDir) {
  return goldenImagePrompt(engine, p, imageDir, -1);
}

/// Whether `prompt` is the golden prompt's layout (its "chunks": text ids, and images of n_tokens
/// pad tokens with their grid nx x ny, the text after each at "next_pos" = st + max(grid)); else
/// false with the first difference in *why.
inline bool sameQwenLayout(const pagedchat::ImagePrompt& prompt, const nlohmann::json& p, std::string* why) {
  std::vector<int> want;
  std::size_t k = 0;
  for (const auto& c : p["chunks"]) {
    if (c["type"] == "text") {
      for (int id : c["ids"]) want.push_back(id);
      continue;
    }
    const std::string which = "image " + std::to_string(k + 1) + ": ";
    if (k >= prompt.images.size()) return *why = which + "missing", false;
    const pagedchat::MultiModalPlaceholder& m = prompt.images[k++];
    if (m.offset != int(want.size())) return *why = which + "offset " + std::to_string(m.offset), false;
    if (m.grid_w != int(c["nx"]) || m.grid_h != int(c["ny"])) return *why = which + "grid differs", false;
    if (int(c["st"]) + m.rope_span() != int(c["next_pos"]))
      return *why = which + "the text after it is misplaced", false;
    want.insert(want.end(), std::size_t(c["n_tokens"]), int(p["hf_image_pad_token"]));
  }
  if (k != prompt.images.size()) return *why = "more images than the golden's", false;
  if (prompt.token_ids != want) return *why = "token ids differ", false;
  return true;
}

/// The largest difference between the first generated token's logprob differences from the
/// golden's top token (logprobs differ from logits by one constant) and the golden's logit
/// differences ("last_prompt_logits_top32": [[id, logit], ...]), over the ids among `first`
/// (the output's logprobs of step 0); *compared counts them, and -1 is returned when the
/// golden's top token is not among them.
inline double firstStepLogitError(const std::map<int, pagedchat::Logprob>& first, const nlohmann::json& p,
                                  int* compared) {
  const auto& top = p["last_prompt_logits_top32"];
  const int top_id = top[0][0];
  *compared = 0;
  if (!first.count(top_id)) return -1;
  double worst = 0;
  for (const auto& e : top) {
    const auto it = first.find(int(e[0]));
    if (it == first.end()) continue;
    const double ours = double(it->second.logprob) - double(first.at(top_id).logprob);
    worst = std::max(worst, std::fabs(ours - (double(e[1]) - double(top[0][1]))));
    ++*compared;
  }
  return worst;
}

/// One golden prompt through the engine, and how it compares (the caller asserts).
struct GoldenPromptRun {
  std::string layout_error;  ///< sameQwenLayout's difference, or empty
  double logit_error = -1;   ///< firstStepLogitError (-1: the golden's top token is not among ours)
  int compared = 0;          ///< logit differences compared
  NearTieCheck near;         ///< the greedy ids against the golden's steps
};

/// Runs `prompt` alone on `engine` as request `id` (16 greedy tokens, EOS ignored, 20 logprobs a
/// token) and compares the first step's logit differences and the ids with the reference run
/// `ref` ({"last_prompt_logits_top32", "steps"}), near-ties below `near_tie`.
inline GoldenPromptRun runAgainstReference(pagedchat::LLMEngine& engine, const pagedchat::ImagePrompt& prompt,
                                           const nlohmann::json& ref, const std::string& id, double near_tie = 1e-3) {
  GoldenPromptRun r;
  pagedchat::SamplingParams sp = testutil::greedy(16);
  sp.ignore_eos = true;
  sp.logprobs = 20;
  pagedchat::RequestOptions o;
  o.images = prompt.images;
  engine.add_request(id, prompt.token_ids, sp, o);
  const pagedchat::CompletionOutput out = testutil::runToCompletion(engine).at(id).outputs.at(0);
  r.logit_error = firstStepLogitError(out.logprobs->at(0), ref, &r.compared);
  r.near = compareToNearTie(out.token_ids, ref["steps"], near_tie);
  return r;
}

/// Checks `prompt`'s layout against the golden Qwen prompt `p` (sameQwenLayout), then runs it
/// against `p` itself as the reference (runAgainstReference).
inline GoldenPromptRun runGoldenPrompt(pagedchat::LLMEngine& engine, const pagedchat::ImagePrompt& prompt,
                                       const nlohmann::json& p, const std::string& id) {
  std::string layout;
  sameQwenLayout(prompt, p, &layout);
  GoldenPromptRun r = runAgainstReference(engine, prompt, p, id);
  r.layout_error = layout;
  return r;
}

}  // namespace visiontest
