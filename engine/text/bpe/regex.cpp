#include "engine/text/bpe/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

namespace pagedchat::bpe {

namespace {
std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  const int n = pcre2_get_error_message(code, buf, sizeof buf);
  return n > 0 ? std::string(reinterpret_cast<const char*>(buf), std::size_t(n)) : "error " + std::to_string(code);
}

// Per-thread match data and JIT stack (PCRE2 objects are not shareable between concurrent matches).
struct ThreadState {
  pcre2_match_data* md = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* ctx = nullptr;
  ThreadState() {
    md = pcre2_match_data_create(4, nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    ctx = pcre2_match_context_create(nullptr);
    if (ctx && stack) pcre2_jit_stack_assign(ctx, nullptr, stack);
  }
  ~ThreadState() {
    pcre2_match_context_free(ctx);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(md);
  }
};
ThreadState& thread_state() {
  thread_local ThreadState s;
  return s;
}
}  // namespace

Regex::Regex(const std::string& pattern, const std::string& where) : pattern_(pattern) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_NO_UTF_CHECK, &err, &offset,
                                   nullptr);
  if (!code)
    throw std::runtime_error(where + ": the regular expression '" + pattern + "' is not valid: " + pcre2_message(err) +
                             " (at offset " + std::to_string(offset) + ")");
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  code_ = code;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Regex::for_each_match(std::string_view text, const std::function<void(std::size_t, std::size_t)>& on_match) const {
  auto* code = static_cast<pcre2_code*>(code_);
  ThreadState& ts = thread_state();
  if (!ts.md) throw std::bad_alloc();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  while (start <= text.size()) {
    const int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), start, 0, ts.md, ts.ctx)
                        : pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, ts.md, ts.ctx);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0)
      throw std::runtime_error("the regular expression '" + pattern_ + "' failed on the text: " + pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(ts.md);
    const std::size_t b = ov[0], e = ov[1];
    on_match(b, e);
    if (e > b) {
      start = e;
    } else {  // empty match: resume one character later
      if (e >= text.size()) return;
      std::size_t next = e + 1;
      while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
      start = next;
    }
  }
}

}  // namespace pagedchat::bpe
