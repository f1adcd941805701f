// GrammarMatcher: where one request's output stands in its Grammar, the tokens that may come
// next (a bitmask over the vocabulary), and the token that came. vLLM v1's structured output
// manager fills such a bitmask per request each step (vllm/v1/structured_output/); ours is
// computed over a byte trie of the vocabulary (TokenTrie) with three caches, so a step costs little
// once the output is in a state it has been in before (inside a string: nearly every step).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/sample/structured/grammar.h"

namespace pagedchat {
class Tokenizer;
}

namespace pagedchat::structured {

/// The vocabulary as a byte trie: each token's bytes (Tokenizer::token_text) from the root, the
/// tokens ending at each node. Control tokens and tokens with no bytes are left out (a grammar
/// never admits them); the end-of-sequence ids are kept apart. Built once per tokenizer and
/// shared by every matcher (read-only).
class TokenTrie {
 public:
  /// `tokenizer`: the model's; `vocab`: the rows of the model's logits (ids >= the tokenizer's
  /// vocabulary are never allowed); `eos_ids`: the ids that end a reply.
  TokenTrie(const Tokenizer& tokenizer, int vocab, std::vector<int> eos_ids);

  struct Node {
    uint32_t first_child = 0;  ///< children are nodes [first_child, first_child + num_children)
    uint32_t num_children = 0;
    uint32_t first_token = 0;  ///< tokens ending here: token_ids_[first_token, + num_tokens)
    uint32_t num_tokens = 0;
    uint8_t byte = 0;  ///< the byte leading here from the parent
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& token_ids() const { return token_ids_; }
  const std::string& bytes_of(int id) const { return bytes_.at(std::size_t(id)); }
  const std::vector<int>& eos_ids() const { return eos_ids_; }
  bool is_eos(int id) const;
  int vocab() const { return vocab_; }
  /// 64-bit words of a bitmask over the vocabulary.
  int mask_words() const { return (vocab_ + 63) / 64; }

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;
  std::vector<std::string> bytes_;  // per id ("" for ids left out)
  std::vector<int> eos_ids_;
  int vocab_ = 0;
};

/// One output's position in a Grammar. Not thread-safe; one per request (its caches grow with
/// the distinct positions the output passes through: the masks to 16 MiB, then they start over).
class GrammarMatcher {
 public:
  /// `max_depth`: most nested rule calls (deeper paths are dropped: a schema nested deeper than
  /// this cannot be completed).
  GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie, int max_depth = 128);

  /// Fills `mask` (TokenTrie::mask_words() words; bit i of word i/64 = token i) with the tokens
  /// whose bytes the grammar accepts from here; the end-of-sequence ids when the output may end
  /// here (can_terminate()).
  void fill_next_token_bitmask(uint64_t* mask);
  /// Advances over token `id`'s bytes; an end-of-sequence id is accepted when can_terminate().
  /// Returns false, changing nothing, when the grammar does not accept it.
  bool accept_token(int id);
  /// Advances over `bytes`; false (nothing changed) when the grammar does not accept them all.
  bool accept_bytes(std::string_view bytes);
  /// The output read so far is a whole sentence of the grammar.
  bool can_terminate() const;
  /// can_terminate() and nothing more can follow: the output is complete.
  bool is_terminated() const;
  /// An end-of-sequence token was accepted.
  bool ended() const { return ended_; }

 private:
  struct Config {
    int32_t state;
    int32_t frame;  ///< the call stack (frames_), -1 = empty
    bool operator==(const Config& o) const { return state == o.state && frame == o.frame; }
  };
  struct Frame {
    int32_t ret, parent, depth;
  };
  static constexpr int32_t kDead = -1;

  /// The set of configurations after reading byte `b` in set `set` (kDead when none).
  int32_t step(int32_t set, uint8_t b);
  /// Interns the closure of `configs`: every configuration reachable without reading a byte,
  /// keeping those that read bytes or end the grammar.
  int32_t close_and_intern(std::vector<Config>& configs);
  int32_t push_frame(int32_t ret, int32_t parent);
  bool set_accepts(int32_t set) const;
  void clear_caches_if_large();

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  int max_depth_;
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> frame_ids_;
  std::vector<std::vector<Config>> sets_;
  std::unordered_map<std::string, int32_t> set_ids_;
  std::unordered_map<uint64_t, int32_t> transitions_;              ///< (set << 8 | byte) -> set
  std::unordered_map<int32_t, std::vector<uint64_t>> mask_cache_;  ///< set -> its bitmask
  int32_t current_ = kDead;
  bool ended_ = false;
  // Scratch for close_and_intern (no allocation per step once grown).
  std::vector<Config> work_, kept_;
};

}  // namespace pagedchat::structured
