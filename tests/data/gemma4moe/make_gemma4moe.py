#!/usr/bin/python3
"""Writes gemma4moe-tiny.gguf: a tiny random-weight Gemma 4 with the 26B-A4B mixture of experts.

Usage (ik_llama.cpp 8337e4cd's gguf-py on the path; see README.md):
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_gemma4moe.py \
      <shared>/models/vocab/ggml-vocab-llama-spm.gguf gemma4moe-tiny.gguf \
      <ik_llama.cpp>/models/templates/google-gemma-4-31B-it.jinja

Keys and tensor names as ik_llama.cpp's LLM_ARCH_GEMMA4 reads them (src/llama-hparams.cpp,
src/llama-load-tensors.cpp create_gemma4_tensors). The vocabulary is the first 512 pieces of
llama.cpp's Llama SPM vocabulary file (<unk>, <s>, </s>, the 256 byte pieces, the first merges), so
the file stays small; every text still tokenizes (byte fallback); then Gemma 4's format markers as
control tokens, and Gemma 4's chat template (Google's, as ik_llama.cpp ships it).
"""
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGMLQuantizationType

VOCAB = 512
DIM = 64
N_HEAD = 4
PATTERN = [True, False, True]  # local, global, local
HD_SWA, HD = 64, 128  # ik's CPU flash attention has kernels for 64 and 128
KV_HEADS = [2, 1, 2]
FF = 64  # the dense MLP beside the experts
N_EXP, N_USED, FF_EXP = 4, 2, 32
WINDOW = 6


# Gemma 4's chat-format markers (its template's), appended as control tokens.
MARKERS = ["<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>",
           "<tool_response|>", '<|"|>']


def read_vocab(vocab_path):
    """The first VOCAB pieces of a llama.cpp SPM vocabulary file, then Gemma 4's markers as control tokens."""
    src = GGUFReader(vocab_path)

    def field(name):
        f = src.fields[name]
        return [f.parts[i] for i in f.data]

    tokens = [bytes(t).decode("utf-8") for t in field("tokenizer.ggml.tokens")][:VOCAB]
    scores = [float(s[0]) for s in field("tokenizer.ggml.scores")][:VOCAB]
    types = [int(t[0]) for t in field("tokenizer.ggml.token_type")][:VOCAB]
    tokens += MARKERS
    scores += [0.0] * len(MARKERS)
    types += [3] * len(MARKERS)  # CONTROL
    return tokens, scores, types


def add_vocab(w, vocab, template_path):
    """The vocabulary (read_vocab()), its special ids and the chat template at `template_path`."""
    tokens, scores, types = vocab
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(template)


def main(vocab_path, out_path, template_path):
    rng = np.random.default_rng(20261205)
    vocab = read_vocab(vocab_path)
    n_vocab = len(vocab[0])

    w = GGUFWriter(out_path, "gemma4")
    n = len(PATTERN)
    w.add_context_length(8192)
    w.add_embedding_length(DIM)
    w.add_block_count(n)
    w.add_feed_forward_length(FF)
    w.add_head_count(N_HEAD)
    w.add_array("gemma4.attention.head_count_kv", KV_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_uint32("gemma4.attention.sliding_window", WINDOW)
    w.add_array("gemma4.attention.sliding_window_pattern", PATTERN)
    w.add_uint32("gemma4.attention.shared_kv_layers", 0)
    w.add_uint32("gemma4.embedding_length_per_layer_input", 0)
    w.add_uint32("gemma4.attention.key_length", HD)
    w.add_uint32("gemma4.attention.value_length", HD)
    w.add_uint32("gemma4.attention.key_length_swa", HD_SWA)
    w.add_uint32("gemma4.attention.value_length_swa", HD_SWA)
    w.add_uint32("gemma4.rope.dimension_count", HD)
    w.add_uint32("gemma4.rope.dimension_count_swa", HD_SWA)
    w.add_float32("gemma4.rope.freq_base", 1e6)
    w.add_float32("gemma4.rope.freq_base_swa", 10000.0)
    w.add_float32("gemma4.final_logit_softcapping", 30.0)
    w.add_uint32("gemma4.expert_count", N_EXP)
    w.add_uint32("gemma4.expert_used_count", N_USED)
    w.add_uint32("gemma4.expert_feed_forward_length", FF_EXP)
    add_vocab(w, vocab, template_path)

    def mat(rows, cols):
        return rng.normal(0, 0.02, size=(rows, cols)).astype(np.float32)

    def norm(k):
        return rng.uniform(0.9, 1.1, size=k).astype(np.float32)

    w.add_tensor("token_embd.weight", mat(n_vocab, DIM))
    w.add_tensor("output_norm.weight", norm(DIM))
    # Proportional RoPE on global layers: a quarter of the pairs rotate (the converter's 1.0 / 1e30).
    w.add_tensor("rope_freqs.weight", np.array([1.0] * (HD // 8) + [1e30] * (HD // 2 - HD // 8), dtype=np.float32))
    for il, local in enumerate(PATTERN):
        hd = HD_SWA if local else HD
        kv = KV_HEADS[il] * hd
        p = f"blk.{il}."
        w.add_tensor(p + "attn_norm.weight", norm(DIM))
        w.add_tensor(p + "attn_q.weight", mat(N_HEAD * hd, DIM))
        w.add_tensor(p + "attn_k.weight", mat(kv, DIM))
        if local:  # the global layer has no attn_v: V is its K projection (attention_k_eq_v)
            w.add_tensor(p + "attn_v.weight", mat(kv, DIM))
        w.add_tensor(p + "attn_output.weight", mat(DIM, N_HEAD * hd))
        w.add_tensor(p + "attn_q_norm.weight", norm(hd))
        w.add_tensor(p + "attn_k_norm.weight", norm(hd))
        w.add_tensor(p + "post_attention_norm.weight", norm(DIM))
        w.add_tensor(p + "ffn_norm.weight", norm(DIM))
        w.add_tensor(p + "ffn_gate.weight", mat(FF, DIM))
        w.add_tensor(p + "ffn_up.weight", mat(FF, DIM))
        w.add_tensor(p + "ffn_down.weight", mat(DIM, FF))
        w.add_tensor(p + "post_ffw_norm.weight", norm(DIM))
        w.add_tensor(p + "layer_output_scale.weight", rng.uniform(0.5, 1.0, size=1).astype(np.float32))
        # Router: a larger spread than 0.02 so the top-2 choice is not a near-tie.
        w.add_tensor(p + "ffn_gate_inp.weight", rng.normal(0, 0.5, size=(N_EXP, DIM)).astype(np.float32))
        w.add_tensor(p + "ffn_gate_inp.scale", norm(DIM))
        w.add_tensor(p + "pre_ffw_norm_2.weight", norm(DIM))
        w.add_tensor(p + "post_ffw_norm_1.weight", norm(DIM))
        w.add_tensor(p + "post_ffw_norm_2.weight", norm(DIM))
        w.add_tensor(p + "ffn_gate_up_exps.weight",
                     rng.normal(0, 0.02, size=(N_EXP, 2 * FF_EXP, DIM)).astype(np.float32))
        w.add_tensor(p + "ffn_down_exps.weight", rng.normal(0, 0.02, size=(N_EXP, DIM, FF_EXP)).astype(np.float32))
        w.add_tensor(p + "ffn_down_exps.scale", rng.uniform(0.5, 1.5, size=N_EXP).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
