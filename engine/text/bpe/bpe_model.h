// BpeModel: the byte-pair-encoding model of Hugging Face tokenizers (models/bpe) and llama.cpp's
// llm_tokenizer_bpe: a vocabulary (token string -> id), merge ranks, and the merge loop that turns
// one pre-tokenized word into ids.
//
// Algorithm (HF tokenizers BPE::merge_word, llama.cpp llm_tokenizer_bpe_session::tokenize): the
// word starts as one symbol per character (continuing_subword_prefix before every character but
// the first, end_of_word_suffix after the last, when set); a character missing from the
// vocabulary becomes its <0xAB> byte tokens when byte_fallback (and they all exist), else the unk
// token (consecutive ones fused when fuse_unk), else it is dropped. Then the adjacent pair with
// the lowest merge rank is merged, leftmost first among equal ranks, until no pair has a merge —
// a priority queue over a linked list, O(n log n) per word. With ignore_merges (Llama 3) a word
// that is itself a vocabulary entry is taken whole. Results are cached per word.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pagedchat::bpe {

struct BpeModelOptions {
  bool byte_fallback = false;             ///< unknown characters -> <0xAB> tokens (sentencepiece-style BPE)
  bool ignore_merges = false;             ///< a word found whole in the vocabulary is one token
  bool whole_newline_runs = false;        ///< ... when it is only '\n's (Gemma 4, llama.cpp's gemma4 BPE)
  bool fuse_unk = false;                  ///< consecutive unknown characters give one unk token
  int unk_id = -1;                        ///< -1: no unknown token
  std::string continuing_subword_prefix;  ///< "" = none
  std::string end_of_word_suffix;         ///< "" = none
};

class BpeModel {
 public:
  /// `vocab`: the model's token strings by id ("" marks an id the model does not own, e.g. an
  /// added token's). `merges` in rank order. Throws std::runtime_error "<where>: ..." when a
  /// merge names a token that is not in the vocabulary or its result is not.
  BpeModel(std::vector<std::string> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeModelOptions options, const std::string& where);

  /// Appends the ids of one pre-tokenized word (valid UTF-8, non-empty) to `out`.
  void encode_word(std::string_view word, std::vector<int>& out) const;

  std::optional<int> token_id(std::string_view token) const;
  /// The token string of `id` ("" outside the model's vocabulary).
  const std::string& token(int id) const;
  std::size_t size() const { return vocab_.size(); }
  std::size_t merge_count() const { return merges_.size(); }
  const BpeModelOptions& options() const { return opts_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  void merge_word(std::string_view word, std::vector<int>& out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int, Hash, std::equal_to<>> ids_;
  std::unordered_map<uint64_t, uint64_t> merges_;  // (left << 32 | right) -> (rank << 32 | merged)
  BpeModelOptions opts_;
  std::vector<int> byte_ids_;  // <0xAB> token ids when byte_fallback (-1 if missing)

  // word -> ids cache (shared by threads; cleared when it grows past its limit)
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>, Hash, std::equal_to<>> cache_;
};

}  // namespace pagedchat::bpe
