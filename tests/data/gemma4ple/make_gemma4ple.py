#!/usr/bin/python3
"""Writes gemma4ple-tiny.gguf: a tiny random-weight dense Gemma 4 with the E2B/E4B mechanisms in the
form a Hugging Face config.json can state them: per-layer embeddings, KV-shared last layers with a
double-wide MLP, and K = V on every global layer.

Usage (ik_llama.cpp 8337e4cd's gguf-py on the path; see README.md):
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_gemma4ple.py \
      <shared>/models/vocab/ggml-vocab-llama-spm.gguf gemma4ple-tiny.gguf \
      <ik_llama.cpp>/models/templates/google-gemma-4-31B-it.jinja

Keys and tensor names as ik_llama.cpp's LLM_ARCH_GEMMA4 reads them (src/llama-hparams.cpp,
src/llama-load-tensors.cpp create_gemma4_tensors). The vocabulary is the first 512 pieces of
llama.cpp's Llama SPM vocabulary file (<unk>, <s>, </s>, the 256 byte pieces, the first merges), so
the file stays small; every text still tokenizes (byte fallback); then Gemma 4's format markers as
control tokens, and Gemma 4's chat template (Google's, as ik_llama.cpp ships it).
"""
import os
import sys

import numpy as np
from gguf import GGUFWriter

# The vocabulary, its markers and the chat template as gemma4moe-tiny has them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gemma4moe"))
from make_gemma4moe import add_vocab, read_vocab  # noqa: E402

DIM = 64
N_HEAD = 2
PATTERN = [True, False, True, False, True, False]  # local, global, ...
HD_SWA, HD = 64, 128  # ik's CPU flash attention has kernels for 64 and 128
KV_HEADS = [2, 1, 2, 1, 2, 1]
SHARED = 2  # layers 4 and 5 read the KV of layers 2 (local) and 3 (global)
FF = [64, 64, 64, 64, 128, 128]  # use_double_wide_mlp: twice the width on the shared layers
PLE = 16  # embedding_length_per_layer_input
WINDOW = 6


def main(vocab_path, out_path, template_path):
    rng = np.random.default_rng(20261205)
    vocab = read_vocab(vocab_path)
    n_vocab = len(vocab[0])

    w = GGUFWriter(out_path, "gemma4")
    n = len(PATTERN)
    w.add_context_length(8192)
    w.add_embedding_length(DIM)
    w.add_block_count(n)
    w.add_array("gemma4.feed_forward_length", FF)
    w.add_head_count(N_HEAD)
    w.add_array("gemma4.attention.head_count_kv", KV_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_uint32("gemma4.attention.sliding_window", WINDOW)
    w.add_array("gemma4.attention.sliding_window_pattern", PATTERN)
    w.add_uint32("gemma4.attention.shared_kv_layers", SHARED)
    w.add_uint32("gemma4.embedding_length_per_layer_input", PLE)
    w.add_uint32("gemma4.attention.key_length", HD)
    w.add_uint32("gemma4.attention.value_length", HD)
    w.add_uint32("gemma4.attention.key_length_swa", HD_SWA)
    w.add_uint32("gemma4.attention.value_length_swa", HD_SWA)
    w.add_uint32("gemma4.rope.dimension_count", HD)
    w.add_uint32("gemma4.rope.dimension_count_swa", HD_SWA)
    w.add_float32("gemma4.rope.freq_base", 1e6)
    w.add_float32("gemma4.rope.freq_base_swa", 10000.0)
    w.add_float32("gemma4.final_logit_softcapping", 30.0)
    add_vocab(w, vocab, template_path)

    def mat(rows, cols):
        return rng.normal(0, 0.02, size=(rows, cols)).astype(np.float32)

    def norm(k):
        return rng.uniform(0.9, 1.1, size=k).astype(np.float32)

    w.add_tensor("token_embd.weight", mat(n_vocab, DIM))
    w.add_tensor("output_norm.weight", norm(DIM))
    # Proportional RoPE on global layers: a quarter of the pairs rotate (the converter's 1.0 / 1e30).
    w.add_tensor("rope_freqs.weight", np.array([1.0] * (HD // 8) + [1e30] * (HD // 2 - HD // 8), dtype=np.float32))
    w.add_tensor("per_layer_token_embd.weight", mat(n_vocab, n * PLE))
    w.add_tensor("per_layer_model_proj.weight", mat(n * PLE, DIM))
    w.add_tensor("per_layer_proj_norm.weight", norm(PLE))
    for il, local in enumerate(PATTERN):
        hd = HD_SWA if local else HD
        kv = KV_HEADS[il] * hd
        own_kv = il < n - SHARED
        p = f"blk.{il}."
        w.add_tensor(p + "attn_norm.weight", norm(DIM))
        w.add_tensor(p + "attn_q.weight", mat(N_HEAD * hd, DIM))
        if own_kv:
            w.add_tensor(p + "attn_k.weight", mat(kv, DIM))
            if local:  # global layers have no attn_v: V is their K projection (attention_k_eq_v)
                w.add_tensor(p + "attn_v.weight", mat(kv, DIM))
            w.add_tensor(p + "attn_k_norm.weight", norm(hd))
        w.add_tensor(p + "attn_output.weight", mat(DIM, N_HEAD * hd))
        w.add_tensor(p + "attn_q_norm.weight", norm(hd))
        w.add_tensor(p + "post_attention_norm.weight", norm(DIM))
        w.add_tensor(p + "ffn_norm.weight", norm(DIM))
        w.add_tensor(p + "ffn_gate.weight", mat(FF[il], DIM))
        w.add_tensor(p + "ffn_up.weight", mat(FF[il], DIM))
        w.add_tensor(p + "ffn_down.weight", mat(DIM, FF[il]))
        w.add_tensor(p + "post_ffw_norm.weight", norm(DIM))
        w.add_tensor(p + "layer_output_scale.weight", rng.uniform(0.5, 1.0, size=1).astype(np.float32))
        w.add_tensor(p + "inp_gate.weight", mat(PLE, DIM))
        w.add_tensor(p + "proj.weight", mat(DIM, PLE))
        w.add_tensor(p + "post_norm.weight", norm(DIM))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
