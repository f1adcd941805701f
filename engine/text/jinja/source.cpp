// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
#include "engine/text/jinja/source.h"

#include <stdexcept>

#include "engine/text/jinja/unicode.h"

namespace pagedchat::jinja {

namespace {

// Appends text[from, to) of `in` to `out`, keeping the offsets.
void copy_range(const Source& in, std::size_t from, std::size_t to, Source& out) {
  out.text.append(in.text, from, to - from);
  out.origin.insert(out.origin.end(), in.origin.begin() + static_cast<std::ptrdiff_t>(from),
                    in.origin.begin() + static_cast<std::ptrdiff_t>(to));
}

void finish(const Source& in, Source& out) { out.origin.push_back(in.origin.back()); }

bool line_start(std::string_view s, std::size_t i) {
  if (i == 0) return true;
  const char c = s[i - 1];
  if (c == '\n' || c == '\r') return true;
  // U+2028 / U+2029 are E2 80 A8 / E2 80 A9.
  return i >= 3 && static_cast<unsigned char>(s[i - 3]) == 0xE2 && static_cast<unsigned char>(s[i - 2]) == 0x80 &&
         (static_cast<unsigned char>(s[i - 1]) == 0xA8 || static_cast<unsigned char>(s[i - 1]) == 0xA9);
}

// /^[ \t]*({[#%-])/gm -> "$1"
Source lstrip_blocks(const Source& in) {
  const std::string_view s = in.text;
  Source out;
  out.text.reserve(s.size());
  out.origin.reserve(s.size() + 1);
  std::size_t i = 0, copied = 0;
  while (i < s.size()) {
    if (line_start(s, i)) {
      std::size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' && (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
        copy_range(in, copied, i, out);
        copied = j;
        i = j + 2;
        continue;
      }
    }
    ++i;
  }
  copy_range(in, copied, s.size(), out);
  finish(in, out);
  return out;
}

// /([#%-]})\n/g -> "$1"
Source trim_blocks(const Source& in) {
  const std::string_view s = in.text;
  Source out;
  out.text.reserve(s.size());
  out.origin.reserve(s.size() + 1);
  std::size_t copied = 0;
  for (std::size_t i = 0; i + 2 < s.size();) {
    if ((s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' && s[i + 2] == '\n') {
      copy_range(in, copied, i + 2, out);
      copied = i + 3;
      i += 3;
    } else {
      ++i;
    }
  }
  copy_range(in, copied, s.size(), out);
  finish(in, out);
  return out;
}

bool starts_with(std::string_view s, std::size_t i, std::string_view what) {
  return i <= s.size() && s.substr(i, what.size()) == what;
}

// If a generation tag {%(-?)\s*(?:end)?generation\s*(-?)%} starts at `i`, its end and the two
// '-' flags.
struct GenerationTag {
  bool found = false;
  std::size_t end = 0;
  bool lstrip = false;
  bool rstrip = false;
};

GenerationTag generation_tag(std::string_view s, std::size_t i) {
  GenerationTag tag;
  if (!starts_with(s, i, "{%")) return tag;
  std::size_t j = i + 2;
  if (j < s.size() && s[j] == '-') tag.lstrip = true, ++j;
  while (std::size_t w = unicode::js_space_at(s, j)) j += w;
  if (starts_with(s, j, "end")) j += 3;
  // "(?:end)?" matching nothing cannot help when "end" was there: "generation" does not start with "end".
  if (!starts_with(s, j, "generation")) return tag;
  j += 10;
  while (std::size_t w = unicode::js_space_at(s, j)) j += w;
  if (j < s.size() && s[j] == '-') tag.rstrip = true, ++j;
  if (!starts_with(s, j, "%}")) return tag;
  tag.found = true;
  tag.end = j + 2;
  return tag;
}

// /(\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/gs -> (lstrip ? "" : before) + (rstrip ? "" : after)
Source strip_generation_tags(const Source& in) {
  const std::string_view s = in.text;
  if (s.find("generation") == std::string_view::npos) return in;
  Source out;
  out.text.reserve(s.size());
  out.origin.reserve(s.size() + 1);
  std::size_t copied = 0;  // the regex's lastIndex
  for (std::size_t k = s.find("{%"); k != std::string_view::npos; k = s.find("{%", k + 1)) {
    const GenerationTag tag = generation_tag(s, k);
    if (!tag.found) continue;
    std::size_t before = k;  // the whitespace run before the tag, not reaching back past lastIndex
    while (before > copied) {
      const std::size_t w = unicode::js_space_before(s, before);
      if (w == 0 || before - w < copied) break;
      before -= w;
    }
    std::size_t after = tag.end;
    while (std::size_t w = unicode::js_space_at(s, after)) after += w;
    copy_range(in, copied, tag.lstrip ? before : k, out);
    if (!tag.rstrip) copy_range(in, tag.end, after, out);
    copied = after;
    k = after - 1;  // the next search starts at lastIndex
  }
  copy_range(in, copied, s.size(), out);
  finish(in, out);
  return out;
}

}  // namespace

Source preprocess(std::string_view original) {
  if (original.size() >= (std::size_t{1} << 30)) throw std::length_error("template too large (1 GiB or more)");
  Source src;
  src.text.assign(original);
  src.origin.resize(original.size() + 1);
  for (std::size_t i = 0; i <= original.size(); ++i) src.origin[i] = static_cast<std::uint32_t>(i);
  if (!src.text.empty() && src.text.back() == '\n') {
    src.text.pop_back();
    src.origin.erase(src.origin.end() - 2);  // the '\n' itself; the end offset stays
  }
  src = lstrip_blocks(src);
  src = trim_blocks(src);
  return strip_generation_tags(src);
}

LineColumn line_column(std::string_view text, std::size_t offset) {
  LineColumn lc;
  if (offset > text.size()) offset = text.size();
  for (std::size_t i = 0; i < offset;) {
    if (text[i] == '\n') {
      ++lc.line;
      lc.column = 1;
      ++i;
      continue;
    }
    i += unicode::decode(text, i).len;
    ++lc.column;
  }
  return lc;
}

}  // namespace pagedchat::jinja
