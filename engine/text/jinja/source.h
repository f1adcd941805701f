// The template text the lexer reads, after the rewrites @huggingface/jinja 0.5.11 applies before
// tokenizing (its `preprocess`, with the options its `Template` passes: lstrip_blocks and
// trim_blocks both on, as transformers' apply_chat_template also uses them):
//   1. one trailing "\n" of the template is dropped;
//   2. lstrip_blocks: spaces and tabs at the start of a line are removed before "{%", "{#" and
//      "{-" (regex /^[ \t]*({[#%-])/gm; a line starts after \n, \r, U+2028 or U+2029);
//   3. trim_blocks: a "\n" right after "%}", "#}" or "-}" is removed (regex /([#%-]})\n/g, which
//      also applies inside text and string literals, as in the reference);
//   4. "{% generation %}" and "{% endgeneration %}" tags (transformers' assistant-mask markers)
//      are removed, with the whitespace before / after them when they carry "-".
// Every byte of the result remembers its offset in the original text, so errors point there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pagedchat::jinja {

struct Source {
  std::string text;                   ///< what the lexer reads
  std::vector<std::uint32_t> origin;  ///< origin[i]: offset in the original of text[i]; size text.size() + 1
};

/// Applies the rewrites above. Throws std::length_error for a template of 1 GiB or more.
Source preprocess(std::string_view original);

/// 1-based line and column (in code points) of byte `offset` of `text`.
struct LineColumn {
  std::size_t line = 1;
  std::size_t column = 1;
};
LineColumn line_column(std::string_view text, std::size_t offset);

}  // namespace pagedchat::jinja
