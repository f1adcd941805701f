#include "engine/multimodal/mm_prompt.h"

#include <stdexcept>
#include <string>

#include "engine/text/tokenizer.h"
#include "engine/vision/vision_encoder.h"

namespace pagedchat {

namespace {

/// Bytes [begin, end) of `t` with its data ranges clipped and shifted.
TemplatedText slice(const TemplatedText& t, std::size_t begin, std::size_t end) {
  TemplatedText out;
  out.text = t.text.substr(begin, end - begin);
  for (const ByteRange& r : t.data) {
    const std::size_t b = std::max(r.begin, begin), e = std::min(r.end, end);
    if (b < e) out.data.push_back({b - begin, e - begin});
  }
  return out;
}

}  // namespace

std::string strip_image_markers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text.substr(i, kImageMarker.size()) == kImageMarker) {
      i += kImageMarker.size();
      continue;
    }
    out += text[i++];
  }
  return out;
}

TemplatedText strip_image_markers(const TemplatedText& prompt) {
  TemplatedText out;
  std::size_t from = 0;
  for (std::size_t at = prompt.text.find(kImageMarker);; at = prompt.text.find(kImageMarker, from)) {
    const std::size_t end = at == std::string::npos ? prompt.text.size() : at;
    if (end > from) out.append(slice(prompt, from, end));
    if (at == std::string::npos) break;
    from = at + kImageMarker.size();
  }
  return out;
}

int image_placeholder_id(const Tokenizer& tokenizer) {
  for (const char* piece : {"<image_soft_token>", "<|image_pad|>", "<|image|>", "<image>"})
    if (const std::optional<int> id = tokenizer.piece_to_id(piece)) return *id;
  return 0;
}

ImagePrompt encode_image_prompt(const Tokenizer& tokenizer, const VisionEncoder& encoder, const TemplatedText& prompt,
                                const std::vector<std::shared_ptr<const RgbImage>>& images, int bos_id,
                                int placeholder_id) {
  // As llama.cpp's mtmd lays an image out: the text before it, the encoder's begin text, its
  // positions, the end text, each piece of text tokenized on its own (the begin and end text as
  // template text, so their special tokens count).
  const VisionConfig& vc = encoder.config();
  std::vector<std::size_t> marks;
  for (std::size_t at = prompt.text.find(kImageMarker); at != std::string::npos;
       at = prompt.text.find(kImageMarker, at + kImageMarker.size()))
    marks.push_back(at);
  if (marks.size() != images.size())
    throw std::invalid_argument("the prompt has " + std::to_string(marks.size()) + " image places but " +
                                std::to_string(images.size()) + " images were given");
  ImagePrompt out;
  auto add_text = [&](const TemplatedText& t) {
    const std::vector<int> ids = tokenizer.encode_templated(t);
    out.token_ids.insert(out.token_ids.end(), ids.begin(), ids.end());
  };
  auto add_template_text = [&](const std::string& s) {
    if (s.empty()) return;
    TemplatedText t;
    t.append(s, false);
    add_text(t);
  };
  std::size_t piece = 0;
  for (std::size_t k = 0; k <= marks.size(); ++k) {
    const std::size_t end = k < marks.size() ? marks[k] : prompt.text.size();
    if (end > piece) add_text(slice(prompt, piece, end));
    if (k == 0 && bos_id >= 0 && (out.token_ids.empty() || out.token_ids.front() != bos_id))
      out.token_ids.insert(out.token_ids.begin(), bos_id);
    if (k == marks.size()) break;
    if (!images[k] || images[k]->empty()) throw std::invalid_argument("image " + std::to_string(k + 1) + " is empty");
    add_template_text(vc.image_begin);
    MultiModalPlaceholder m;
    m.offset = int(out.token_ids.size());
    // The picture at the encoder's size: a large photo's pixels are not kept with the request.
    const RgbImage& given = *images[k];
    const std::pair<int, int> size = encoder.fit_size(given.width, given.height);
    const bool sized = given.width == size.first && given.height == size.second;
    m.image = sized ? images[k] : std::make_shared<const RgbImage>(encoder.fit(given));
    const ImageGrid grid = encoder.grid(*m.image);
    m.length = grid.tokens;
    m.grid_w = grid.grid_w;
    m.grid_h = grid.grid_h;
    m.identity = image_identity(*m.image);
    m.bidirectional = vc.bidirectional;
    m.window_spans_image = vc.window_spans_image;
    out.token_ids.insert(out.token_ids.end(), std::size_t(m.length), placeholder_id);
    out.images.push_back(std::move(m));
    add_template_text(vc.image_end);
    piece = end + kImageMarker.size();
  }
  return out;
}

}  // namespace pagedchat
