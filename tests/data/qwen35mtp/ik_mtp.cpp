// The MTP golden of qwen35-mtp.gguf from ik_llama.cpp's libllama (8337e4cd): for each prompt of the
// qwen35-tiny golden, 12 greedy target tokens and, before each, K = 4 drafts of the model's MTP block
// (blk.4, nextn) with the top-10 [id, logit] of every draft row. Settings as ../shared/models/arch's
// arch3 goldens: CPU, one thread, K cache F32, V cache F16, flash attention off, n_ctx 512,
// n_batch = n_ubatch = 512, ik's defaults otherwise; model and both contexts with mtp on.
// Two contexts as common/speculative.cpp sets up its MTP stage: ctx_tgt (the main stack) and
// ctx_mtp (created with mtp_op_type MTP_OP_WARMUP, embeddings on, pooling none, and
// llama_set_mtp_target_context(ctx_mtp, ctx_tgt)). Per prompt x_0..x_{n-1}:
//   1. ctx_tgt decodes the prompt in one call; with mtp on, llama_get_embeddings(ctx_tgt) holds the
//      output-normed hidden row h_p of every prompt position p (row p at + p*n_embd).
//   2. MTP warmup: ctx_mtp decodes x_0..x_{n-1} at 0..n-1 with hidden rows [0, h_0 .. h_{n-2}]
//      (row p pairs x_p with h_{p-1}), op MTP_OP_WARMUP, as common_speculative_on_target_batch.
//   3. 12 steps, N tokens known: x_N = argmax of the target's last logits; drafts: op
//      MTP_OP_DRAFT_GEN, x_N at N with h_{N-1} -> d1, then d_k at N+k with the MTP's own output
//      hidden (its shared_head_norm'ed row, llama_get_embeddings_ith(ctx_mtp, 0)) -> d_{k+1}, up to
//      d4; remove MTP cache rows >= N;
//      the target decodes x_N at N -> next logits and h_N; op MTP_OP_UPDATE_ACCEPTED re-decodes
//      x_N at N with h_{N-1} into the MTP cache (checked to give d1's logits bit for bit, the row ik
//      reuses as its next first draft). The op type goes back to MTP_OP_NONE after every MTP call.
// Argmax takes the lowest id on ties.
//
// Build (ik_llama.cpp source in $IK/src, built CPU-only into $IK/build):
//   g++ -O2 -std=c++17 ik_mtp.cpp -I$IK/src/include -I$IK/src/ggml/include -L$IK/build/src
//       -L$IK/build/ggml/src -lllama -lggml -Wl,-rpath,$IK/build/src:$IK/build/ggml/src -o ik_mtp  (one line)
// Run: ./ik_mtp qwen35-mtp.gguf golden.json $(sha256sum qwen35-mtp.gguf | cut -c1-64)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "llama.h"

// Exported by libllama but declared only in its internal headers (common/speculative.cpp declares
// the first itself; the second is in src/llama-spec-features.h).
void llama_set_mtp_target_context(struct llama_context* ctx, struct llama_context* target_ctx);
bool llama_set_draft_input_hidden_state_copy(struct llama_context* ctx, const float* hidden_state, size_t n_floats);

namespace {

const int kDrafts = 4, kGen = 12, kTop = 10;
const char* kHow =
    "libllama on CPU, n_threads 1, K cache F32, V cache F16, flash attention off, n_ctx 512, n_batch = n_ubatch = "
    "512, other parameters at ik's defaults; model and contexts with mtp on; ctx_tgt (main stack) and ctx_mtp "
    "(created with mtp_op_type MTP_OP_WARMUP, embeddings on, pooling none, llama_set_mtp_target_context(ctx_mtp, "
    "ctx_tgt)). Target: the prompt x_0..x_{n-1} in one llama_decode; h_p = its output-normed hidden row of "
    "position p (llama_get_embeddings). MTP warmup: x_0..x_{n-1} at positions 0..n-1 with hidden rows [0, h_0 .. "
    "h_{n-2}], op MTP_OP_WARMUP. Then 12 steps with N tokens known: token = x_N = argmax of the target's last "
    "logits; drafts, one MTP_OP_DRAFT_GEN decode each: x_N at N with h_{N-1} -> d1 = argmax of its logits, then "
    "d_k at N+k with the previous draft row's MTP output hidden (llama_get_embeddings_ith(ctx_mtp, 0)) -> d_{k+1}, "
    "to d4; top10 = each draft row's 10 largest [id, logit]; MTP cache rows >= N removed; the target decodes x_N "
    "at N (next logits, h_N); the MTP decodes the accepted row x_N at N with h_{N-1} (MTP_OP_UPDATE_ACCEPTED). Op "
    "type back to MTP_OP_NONE after each MTP decode; argmax takes the lowest id on ties; logits to 7 significant "
    "digits.";

int argmax(const float* v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// "[[id,logit],...]" of the kTop largest logits (ties: lower id first), logits to 7 significant digits.
std::string top_json(const float* lg, int n_vocab) {
  std::vector<int> ids(static_cast<std::size_t>(n_vocab));
  for (int i = 0; i < n_vocab; ++i) ids[std::size_t(i)] = i;
  std::partial_sort(ids.begin(), ids.begin() + kTop, ids.end(),
                    [lg](int a, int b) { return lg[a] > lg[b] || (lg[a] == lg[b] && a < b); });
  std::string s = "[";
  for (int k = 0; k < kTop; ++k) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s[%d,%.7g]", k ? "," : "", ids[std::size_t(k)], double(lg[ids[std::size_t(k)]]));
    s += buf;
  }
  return s + "]";
}

// Decodes tokens at positions pos0.. on sequence 0, output only for the last row (as ik's MTP code).
bool decode(llama_context* ctx, const std::vector<llama_token>& toks, int pos0) {
  llama_batch b = llama_batch_init(int(toks.size()), 0, 1);
  b.n_tokens = int(toks.size());
  for (int i = 0; i < b.n_tokens; ++i) {
    b.token[i] = toks[std::size_t(i)];
    b.pos[i] = pos0 + i;
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = i == b.n_tokens - 1;
  }
  const int rc = llama_decode(ctx, b);
  llama_batch_free(b);
  return rc == 0;
}

// One MTP decode: rows toks at pos0.. with the given hidden input rows, under op; op back to NONE.
bool mtp_decode(llama_context* ctx, const std::vector<llama_token>& toks, int pos0, const float* hidden, int n_embd,
                llama_mtp_op_type op) {
  if (!llama_set_draft_input_hidden_state_copy(ctx, hidden, toks.size() * std::size_t(n_embd))) return false;
  llama_set_mtp_op_type(ctx, op);
  const bool ok = decode(ctx, toks, pos0);
  llama_set_mtp_op_type(ctx, MTP_OP_NONE);
  return ok;
}

std::string list(const std::vector<llama_token>& x) {
  std::string o = "[";
  for (std::size_t i = 0; i < x.size(); ++i) o += (i ? "," : "") + std::to_string(x[i]);
  return o + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ik_mtp qwen35-mtp.gguf OUT.json SHA256_OF_THE_GGUF\n");
    return 2;
  }
  // prompt_ids of ../shared/models/arch/qwen35-tiny.gguf.golden.json (once_upon, korean, long)
  const std::vector<std::pair<std::string, std::vector<llama_token>>> prompts = {
      {"once_upon", {12522, 5193, 264, 882}},
      {"korean", {126246, 144370, 91145, 11, 133857, 33704}},
      {"long", {12522, 5193, 264,  882,  11,   304,  264,   2613, 14126, 553, 279,  9396, 11,  1052, 12163,
                458,   2310, 7640, 4753, 6941, 8364, 13,    7209, 6556,  566, 6139, 510,  750, 1887, 3932,
                262,   1173, 445,  9707, 11,   1879, 22988, 437,  1221,  566, 3937, 700,  311, 7640, 13}}};
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.mtp = true;  // load the MTP layer (blk.4)
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  const int n_vocab = llama_n_vocab(model), n_embd = llama_model_n_embd(model);
  const std::string ref = "ik_llama.cpp 8337e4cd3861406fc04e0854b1409cd1b027fbc9, CPU, tests/data/qwen35mtp/ik_mtp.cpp";
  std::string js =
      "{\"model\": \"qwen35-mtp.gguf (written by tests/engine/model/test_arch_qwen35_mtp with QWEN35_MTP_OUT)\",\n";
  js += " \"model_sha256\": \"" + std::string(argv[3]) + "\",\n \"reference\": \"" + ref + "\",\n";
  js += " \"how\": \"" + std::string(kHow) + "\",\n \"k\": 4,\n \"n_gen\": 12,\n \"prompts\": [\n";
  int n_accept_same = 0;
  for (std::size_t pi = 0; pi < prompts.size(); ++pi) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_threads = cp.n_threads_batch = 1;
    cp.flash_attn = false;
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F16;
    cp.mtp = true;
    llama_context* tgt = llama_init_from_model(model, cp);
    cp.mtp_op_type = MTP_OP_WARMUP;  // as common_speculative_prepare_mtp_runtime: KV only for blk.4
    cp.embeddings = true;
    cp.pooling_type = LLAMA_POOLING_TYPE_NONE;
    llama_context* mtp = llama_init_from_model(model, cp);
    if (!tgt || !mtp) return 1;
    llama_set_mtp_target_context(mtp, tgt);

    // 1. target prompt; h = its hidden rows (output-normed), one per prompt position
    const std::vector<llama_token>& x = prompts[pi].second;
    const int n = int(x.size());
    if (!decode(tgt, x, 0)) return 1;
    const float* e = llama_get_embeddings(tgt);
    // n_outputs_embd must be >= n: ith(-n) resolves to n_outputs_embd - n, which must be row 0
    if (!e || llama_get_embeddings_ith(tgt, -n) != e) return std::fprintf(stderr, "no hidden rows\n"), 1;
    std::vector<float> h(e, e + std::size_t(n) * std::size_t(n_embd));
    for (float v : h)
      if (!std::isfinite(v)) return std::fprintf(stderr, "hidden not finite\n"), 1;
    for (int p = 1; p < n; ++p)
      if (!std::memcmp(&h[std::size_t(p) * n_embd], &h[std::size_t(p - 1) * n_embd], sizeof(float) * n_embd))
        return std::fprintf(stderr, "hidden rows %d, %d equal\n", p - 1, p), 1;

    // 2. MTP warmup: row p = (x_p, h_{p-1}), h_{-1} = 0
    std::vector<float> shifted(h.size(), 0.0f);
    std::copy(h.begin(), h.end() - n_embd, shifted.begin() + n_embd);
    if (!mtp_decode(mtp, x, 0, shifted.data(), n_embd, MTP_OP_WARMUP)) return 1;
    if (llama_kv_cache_seq_pos_max(mtp, 0) != n - 1) return std::fprintf(stderr, "warmup rows missing\n"), 1;

    // 3. generation
    std::vector<float> h_prev(h.end() - n_embd, h.end());  // h_{N-1}
    std::vector<llama_token> targets;
    std::string steps;
    int N = n;
    for (int s = 0; s < kGen; ++s) {
      const llama_token xN = argmax(llama_get_logits_ith(tgt, -1), n_vocab);
      targets.push_back(xN);
      // b. drafts d1..d4 at N..N+3
      std::vector<llama_token> drafts;
      std::vector<float> hid = h_prev, d1_logits;
      std::string tops;
      llama_token tok = xN;
      for (int k = 0; k < kDrafts; ++k) {
        if (!mtp_decode(mtp, {tok}, N + k, hid.data(), n_embd, MTP_OP_DRAFT_GEN)) return 1;
        const float* lg = llama_get_logits_ith(mtp, 0);
        if (k == 0) d1_logits.assign(lg, lg + n_vocab);
        tok = argmax(lg, n_vocab);
        drafts.push_back(tok);
        tops += std::string(k ? "," : "") + top_json(lg, n_vocab);
        const float* me = llama_get_embeddings_ith(mtp, 0);  // the MTP's output hidden: next row's input
        if (!me) return 1;
        hid.assign(me, me + n_embd);
      }
      // c. drop the draft rows from the MTP cache
      if (!llama_kv_cache_seq_rm(mtp, 0, N, -1)) return std::fprintf(stderr, "seq_rm failed\n"), 1;
      // d. target decodes x_N -> next logits, h_N
      if (!decode(tgt, {xN}, N)) return 1;
      const float* hN = llama_get_embeddings_ith(tgt, 0);
      if (!hN) return 1;
      // e. accepted row (x_N, h_{N-1}) at N into the MTP cache
      if (!mtp_decode(mtp, {xN}, N, h_prev.data(), n_embd, MTP_OP_UPDATE_ACCEPTED)) return 1;
      if (llama_kv_cache_seq_pos_max(mtp, 0) != N) return std::fprintf(stderr, "MTP cache not at N\n"), 1;
      n_accept_same += !std::memcmp(llama_get_logits_ith(mtp, 0), d1_logits.data(), sizeof(float) * n_vocab);
      h_prev.assign(hN, hN + n_embd);
      ++N;
      steps += std::string(s ? ",\n    " : "") + "{\"token\": " + std::to_string(xN) + ", \"drafts\": " + list(drafts) +
               ", \"top10\": [" + tops + "]}";
    }
    js += std::string(pi ? ",\n" : "") + "  {\"name\": \"" + prompts[pi].first + "\", \"prompt_ids\": " + list(x) +
          ", \"steps\": [\n    " + steps + "]}";
    std::fprintf(stderr, "%s: targets %s\n", prompts[pi].first.c_str(), list(targets).c_str());
    llama_free(mtp);
    llama_free(tgt);
  }
  js += "\n ]\n}\n";
  std::fprintf(stderr, "accept rows equal to their d1 rows: %d of %d\n", n_accept_same, int(prompts.size()) * kGen);
  FILE* f = std::fopen(argv[2], "w");
  if (!f) return 1;
  std::fputs(js.c_str(), f);
  std::fclose(f);
  llama_free_model(model);
  return 0;
}
