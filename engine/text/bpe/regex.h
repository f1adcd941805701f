// A compiled pre-tokenizer expression: PCRE2 in UTF + UCP mode (\s, \w, \d and \p{..} are
// Unicode-aware, as in Oniguruma, which Hugging Face tokenizers use, and in JavaScript's /u),
// JIT-compiled when the platform has it. Patterns are run exactly as written in tokenizer.json or
// in llama.cpp's pre-tokenizer table. `^` and `$` are line anchors (Oniguruma's Ruby syntax).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace pagedchat::bpe {

class Regex {
 public:
  /// Compiles `pattern`. Throws std::runtime_error "<where>: the regular expression '<pattern>' is
  /// not valid: <PCRE2's message> (at offset N)".
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// Calls on_match(begin, end) for each match in `text` (valid UTF-8), left to right, the way
  /// Oniguruma's / Rust regex's find_iter do: after an empty match the search resumes one
  /// character later. Throws std::runtime_error when PCRE2 gives up (match limit).
  void for_each_match(std::string_view text, const std::function<void(std::size_t, std::size_t)>& on_match) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
  bool jit_ = false;
};

}  // namespace pagedchat::bpe
