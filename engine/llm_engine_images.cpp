// LLMEngine's images: the vision encoder beside the model, the checks of a request's image
// placeholders, and encoding the images a step reaches (through the encoder cache).
#include <algorithm>
#include <stdexcept>

#include "engine/llm_engine_impl.h"
#include "engine/vision/hf_vision.h"

namespace pagedchat {

std::string LLMEngine::Impl::load_vision(const std::string& hf_folder) {
  if (!config.mmproj.empty()) return open_vision();
  // A Hugging Face folder with a vision tower reads images without an mmproj beside it; a tower
  // that cannot be read leaves the text model as it was (a warning says why).
  if (hf_folder.empty()) return {};
  if (!hf_folder_has_vision(hf_folder)) return hf_folder_vision_gap(hf_folder);
  config.mmproj = hf_folder;
  try {
    return open_vision();
  } catch (const std::runtime_error& e) {  // the tower; a bad image option (invalid_argument) is the user's
    vision.reset();
    config.mmproj.clear();
    return std::string("the folder's vision tower was not loaded, so the model reads no images: ") + e.what();
  }
}

std::string LLMEngine::Impl::open_vision() {
  VisionOptions options;
  options.min_tokens = config.image_min_tokens;
  options.max_tokens = config.image_max_tokens;
  const ModelConfig& mc = model.config;
  options.bidirectional = config.image_bidirectional ? config.image_bidirectional : mc.bidirectional_images;
  vision = VisionEncoder::open(config.mmproj, config.num_threads, options);
  const std::string& type = vision->config().projector_type;
  // Gemma 3's and Gemma 4's projectors go with their own family; Qwen's merger (Qwen3-VL,
  // Qwen3.5/3.6) with a model that places image tokens by M-RoPE (qwen3vl, qwen35, qwen35moe).
  const bool gemma = type == "gemma3" || type == "gemma4v";
  const std::string family = type == "gemma3" ? "gemma3" : "gemma4";
  const bool fits = gemma ? mc.architecture == family : mc.mrope_sections[0] > 0;
  if (!fits)
    throw std::runtime_error(config.mmproj + ": a " +
                             (type == "gemma3"    ? "Gemma 3 image projector"
                              : type == "gemma4v" ? "Gemma 4 image projector"
                                                  : "Qwen3-VL / Qwen3.5 image projector") +
                             ", but the model is '" + mc.architecture + "'" +
                             (gemma ? "" : ", which has no M-RoPE image positions") +
                             " (load the mmproj made for this model)");
  vision->check_text_model(mc.hidden_size, "'" + config.model + "'");
  if (vision->config().deepstack != mc.deepstack_layers)
    throw std::runtime_error(
        config.mmproj + ": the projector makes " + std::to_string(vision->config().deepstack) +
        " deepstack features, the model '" + mc.architecture + "' takes " + std::to_string(mc.deepstack_layers) +
        " (Qwen3-VL's projectors make them, Qwen3.5 / 3.6's do not: is it the mmproj of another model?)");
  for (const kernels::OpFeature need : {kernels::OpFeature::kKeyEnds, kernels::OpFeature::kMRope}) {
    const bool needed = need == kernels::OpFeature::kKeyEnds ? vision->config().bidirectional
                                                             : mc.mrope_sections[0] > 0;
    if (needed && !runner->backend().supports(need))
      throw std::runtime_error(std::string("images for this model need ") + kernels::op_feature_name(need) +
                               ", which the " + runner->backend().name() +
                               " backend lacks (run on the CPU for images)");
  }
  if (vision->config().bidirectional && vision->config().max_tokens_per_image() > config.max_num_batched_tokens)
    throw std::runtime_error("an image takes up to " + std::to_string(vision->config().max_tokens_per_image()) +
                             " positions, more than max_num_batched_tokens " +
                             std::to_string(config.max_num_batched_tokens) + " (one step must hold a whole image)");
  // Gemma 4 was trained with five token budgets (transformers' _SUPPORTED_SOFT_TOKENS).
  const int budget = config.image_max_tokens;
  if (type == "gemma4v" && budget > 0 && budget != 70 && budget != 140 && budget != 280 && budget != 560 &&
      budget != 1120)
    return "--image-max-tokens " + std::to_string(budget) +
           ": Gemma 4 was trained with 70, 140, 280, 560 or 1120 tokens an image; others may read pictures worse";
  return {};
}

void LLMEngine::Impl::take_images(Request& seq, const std::vector<MultiModalPlaceholder>& images) {
  const std::string who = "request '" + seq.request_id + "': ";
  if (!vision) throw std::invalid_argument(who + "this model reads no images (no image projector is loaded)");
  int prev_end = 0;
  for (std::size_t k = 0; k < images.size(); ++k) {
    MultiModalPlaceholder m = images[k];
    const std::string which = who + "image " + std::to_string(k + 1) + " ";
    if (!m.image || m.image->empty()) throw std::invalid_argument(which + "has no pixels");
    if (m.offset < prev_end || m.length <= 0 || m.end() > seq.num_prompt_tokens())
      throw std::invalid_argument(which + "lies outside the prompt or overlaps the one before it");
    ImageGrid grid;
    try {
      grid = vision->grid(*m.image);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(which + e.what());
    }
    if (m.length != grid.tokens || m.grid_w != grid.grid_w || m.grid_h != grid.grid_h)
      throw std::invalid_argument(which + "takes " + std::to_string(m.length) + " positions; this encoder makes " +
                                  std::to_string(grid.tokens) + " for it");
    if (m.identity.empty()) m.identity = image_identity(*m.image);
    m.bidirectional = vision->config().bidirectional;
    m.window_spans_image = vision->config().window_spans_image;
    m.embeddings = nullptr;
    prev_end = m.end();
    seq.mm_inputs.push_back(std::move(m));
  }
}

bool LLMEngine::Impl::encode_scheduled_images(const SchedulerOutput& so) {
  const VisionStopCheck stop = [this, &so] { return step_abandoned(so); };
  for (const ScheduledRequest& s : so.scheduled) {
    Request& r = *s.request;
    const int start = r.num_computed_tokens, end = start + s.num_new_tokens;
    for (MultiModalPlaceholder& m : r.mm_inputs) {
      if (m.embeddings || m.end() <= start || m.offset >= end) continue;
      m.embeddings = encoder_cache.find(m.identity);
      if (m.embeddings) {
        ++stats.num_encoder_cache_hits;
        continue;
      }
      std::shared_ptr<ImageEmbeddings> e;
      try {
        e = std::make_shared<ImageEmbeddings>(vision->encode(*m.image, stop));
      } catch (const VisionEncodeStopped&) {
        return false;
      }
      if (e->num_tokens != m.length || e->width != vision->config().output_width())
        throw std::logic_error("the vision encoder made " + std::to_string(e->num_tokens) + " embeddings of width " +
                               std::to_string(e->width) + " for a placeholder of " + std::to_string(m.length));
      m.embeddings = e;
      encoder_cache.insert(m.identity, std::move(e));
      ++stats.num_encoded_images;
    }
  }
  return true;
}

}  // namespace pagedchat
