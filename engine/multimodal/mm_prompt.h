// Prompts with images: where a chat message's image goes in the rendered prompt, and the token ids
// and placeholders a request is made of (the way llama.cpp's mtmd lays an image out: the
// projector's begin text, one position per embedding, its end text).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/multimodal/mm_input.h"
#include "engine/text/templated_text.h"

namespace pagedchat {

class Tokenizer;
class VisionEncoder;

/// What a message's text carries where an image goes, until the prompt is tokenized: U+FFFC
/// OBJECT REPLACEMENT CHARACTER (Unicode's own placeholder for an embedded object). Text from
/// users has it removed first (strip_image_markers), so only images put it there.
inline constexpr std::string_view kImageMarker = "\xEF\xBF\xBC";

/// `text` without kImageMarker characters.
std::string strip_image_markers(std::string_view text);
/// A rendered prompt without its kImageMarker characters (its data ranges kept on the rest): a
/// conversation's pictures left out for a model that reads none.
TemplatedText strip_image_markers(const TemplatedText& prompt);

/// A tokenized prompt with its images.
struct ImagePrompt {
  std::vector<int> token_ids;
  std::vector<MultiModalPlaceholder> images;  ///< in position order
};

/// Tokenizes a rendered prompt whose k-th kImageMarker stands for images[k]: each marker becomes
/// the encoder's begin text (template text: its special tokens count), as many positions as the
/// encoder makes embeddings for that image (each holding `placeholder_id`), then the end text.
/// Each piece of text — between markers, begin, end — is tokenized on its own (encode_templated),
/// as llama.cpp's mtmd does; `bos_id` (when >= 0) leads the prompt unless it is there already. Throws
/// std::invalid_argument when the markers and the images do not pair up, naming both counts.
ImagePrompt encode_image_prompt(const Tokenizer& tokenizer, const VisionEncoder& encoder, const TemplatedText& prompt,
                                const std::vector<std::shared_ptr<const RgbImage>>& images, int bos_id,
                                int placeholder_id);

/// The id image positions hold in a request's token ids: the vocabulary's own image token when it
/// has one ("<image_soft_token>", "<|image_pad|>", "<image>"), else 0. Only prefix-cache keys
/// and speculative drafts ever see it; the model reads the embeddings.
int image_placeholder_id(const Tokenizer& tokenizer);

}  // namespace pagedchat
