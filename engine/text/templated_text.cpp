// TemplatedText's members (the header is shared byte-for-byte with the chat-template branch, so
// the definitions live here).
#include "engine/text/templated_text.h"

#include <algorithm>

namespace pagedchat {

void TemplatedText::append(std::string_view s, bool is_data) {
  if (s.empty()) return;
  const std::size_t begin = text.size();
  text.append(s);
  if (!is_data) return;
  if (!data.empty() && data.back().end == begin)
    data.back().end = text.size();
  else
    data.push_back({begin, text.size()});
}

void TemplatedText::append(const TemplatedText& t) {
  const std::size_t shift = text.size();
  text += t.text;
  for (const ByteRange& r : t.data) {
    if (r.begin >= r.end) continue;
    const ByteRange s{r.begin + shift, r.end + shift};
    if (!data.empty() && data.back().end == s.begin)
      data.back().end = s.end;
    else
      data.push_back(s);
  }
}

bool TemplatedText::is_template_text(std::size_t begin, std::size_t end) const {
  if (begin >= end) return true;
  // First range that ends after `begin`; it overlaps [begin, end) iff it starts before `end`.
  auto it = std::upper_bound(data.begin(), data.end(), begin,
                             [](std::size_t pos, const ByteRange& r) { return pos < r.end; });
  return it == data.end() || it->begin >= end;
}

}  // namespace pagedchat
