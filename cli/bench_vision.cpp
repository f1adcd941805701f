// `pagedchat-cli bench vision`: the time the image encoder of a projector file (mmproj GGUF)
// takes for one picture — decoding the file, preprocessing (resize, normalise) and the vision
// tower with its projector — the median and best of --runs encodings, after one warm-up.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "cli/bench_common.h"
#include "engine/multimodal/image_decode.h"
#include "engine/vision/vision_encoder.h"

namespace pagedchat::cli::bench {

namespace {
struct VisionBenchOptions {
  std::string mmproj, image;
  int threads = 0;
  int runs = 3;
  VisionOptions vision;
  bool json = false;
};

int run_vision_bench(const VisionBenchOptions& o) {
  const RgbImage image = decode_image_file(o.image);
  auto encoder = VisionEncoder::open(o.mmproj, o.threads, o.vision);
  const VisionConfig& c = encoder->config();
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms;
  int tokens = 0;
  for (int r = 0; r <= o.runs; ++r) {
    const auto t0 = Clock::now();
    // fit() first, as a request does: encode() takes a picture grid() accepts as it is, which an
    // unfitted one on the patch grid but below the token minimum would be.
    const ImageEmbeddings e = encoder->encode(encoder->fit(image));
    const double took = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    tokens = e.num_tokens;
    if (r > 0) ms.push_back(took);  // the first run warms up
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2], best = ms.front();
  if (o.json) {
    nlohmann::json j = {{"benchmark", "vision"},
                        {"projector", c.projector_type},
                        {"image_size", c.image_size},
                        {"layers", c.num_layers},
                        {"hidden", c.hidden_size},
                        {"tokens", tokens},
                        {"input_width", image.width},
                        {"input_height", image.height},
                        {"runs", o.runs},
                        {"median_ms", median},
                        {"best_ms", best}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    const auto [fw, fh] = encoder->fit_size(image.width, image.height);
    std::printf("vision encoder %s: %dx%d image -> %dx%d, %d layers of %d, %d embeddings\n", c.projector_type.c_str(),
                image.width, image.height, fw, fh, c.num_layers, c.hidden_size, tokens);
    std::printf("encode: median %.1f ms, best %.1f ms (%d runs)\n", median, best, o.runs);
  }
  return 0;
}
}  // namespace

Command add_vision_bench_command(CLI::App& bench) {
  auto o = std::make_shared<VisionBenchOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "vision", "Time an image projector's encoder (mmproj GGUF) on one picture: decode, preprocess, vision tower");
  cmd->add_option("--mmproj", o->mmproj,
                  "the image projector (mmproj GGUF, or a Hugging Face folder with a vision tower)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--image", o->image, "a PNG, JPEG or WebP picture")->required()->check(CLI::ExistingFile);
  cmd->add_option("--threads", o->threads, "CPU threads (default 0: all cores)");
  cmd->add_option("--image-min-tokens", o->vision.min_tokens,
                  "the fewest tokens the picture becomes (Qwen3-VL, Qwen3.5; as chat's option)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--image-max-tokens", o->vision.max_tokens,
                  "the most tokens the picture becomes (as chat's option; Gemma 4: its token budget)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--runs", o->runs, "timed encodings after one warm-up (default 3)")->check(CLI::Range(1, 100));
  cmd->add_flag("--json", o->json, "one JSON object instead of text");
  return [o]() { return run_vision_bench(*o); };
}

}  // namespace pagedchat::cli::bench
