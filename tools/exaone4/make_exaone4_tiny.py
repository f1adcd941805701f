#!/usr/bin/env python3
"""Build the tiny random-weight EXAONE 4 test models (see tests/data/exaone4/README.md).

    /usr/bin/python3 tools/exaone4/make_exaone4_tiny.py OUTDIR        # OUTDIR = tests/data/exaone4
    /usr/bin/python3 tools/exaone4/make_exaone4_tiny.py OUTDIR --tokcheck-gguf FILE
        # also writes a vocab-only GGUF with arch 'llama' (loadable by llama.cpp b4747) for the
        # tokenizer cross-check, see exaone4_tokcheck.cpp

Writes into OUTDIR:
  exaone4-tiny-hf/{config.json, generation_config.json, model.safetensors, tokenizer.json,
                   tokenizer_config.json}
  exaone4-tiny.gguf       arch exaone4, layers 0-2 sliding (window 5, RoPE), layer 3 full (no RoPE)
  exaone4-tiny-full.gguf  the same weights, no sliding window: every layer full attention with RoPE
                          (the EXAONE-4.0-1.2B arrangement)
  prompts.json            the three golden prompts (text and ids), read by exaone4_numpy_ref.py

Deterministic: numpy PCG64 with a fixed seed, fixed corpus, sorted JSON; two runs give identical bytes.
Needs numpy and llama.cpp's gguf-py (GGUF_PY, default /work/llama.cpp-b4747/gguf-py).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exaone4_common as C  # noqa: E402

SEED = 20260904

# ---- shape (EXAONE-4.0-32B's arrangement, scaled down) -----------------------------------------
HIDDEN = 64
N_LAYER = 4
N_HEAD = 4
N_KV = 2
HEAD_DIM = 16
FFN = 128
EPS = 1e-5
THETA = 1_000_000.0
WINDOW = 5
LAYER_TYPES = ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]  # "LLLG"
CTX = 131072

# ---- vocabulary: [PAD] [BOS] [EOS] [UNK], 256 byte tokens, merges, chat tokens --------------------
HEAD_SPECIALS = ["[PAD]", "[BOS]", "[EOS]", "[UNK]"]  # ids 0..3, CONTROL
# (text, special) -> CONTROL when special, else USER_DEFINED (llama.cpp converter rules)
TAIL_TOKENS = [
    ("[|system|]", True), ("[|user|]", True), ("[|assistant|]", True), ("[|tool|]", True),
    ("[|endofturn|]", True), ("<think>", False), ("</think>", False), ("<tool_call>", False),
    ("</tool_call>", False),
]
N_VOCAB = 384
N_MERGES = N_VOCAB - len(HEAD_SPECIALS) - 256 - len(TAIL_TOKENS)  # 115
PAD_ID, BOS_ID, EOS_TEXT, UNK_ID = 0, 1, "[|endofturn|]", 3

CORPUS = [
    "Once upon a time, in a small village by the sea, there lived an old fisherman named Tom.",
    "Once upon a time there was a king who lived in a castle by the sea.",
    "Every morning the old man went out to the sea to fish, and every evening he came home.",
    "The time has come, the fisherman said, to talk of many things: of ships and shoes and sealing wax.",
    "def main():\n    print(\"Hello, world!\")\n    return 0\n",
    "def add(a, b):\n    return a + b\n",
    "for i in range(10):\n    print(i)\n",
    "안녕하세요, 오늘은 날씨가 정말 좋네요.",
    "오늘은 바다에 가서 낚시를 했습니다.",
    "안녕하세요. 만나서 반갑습니다. 오늘은 무엇을 할까요?",
    "EXAONE is a language model from LG AI Research; it speaks Korean, English and Spanish.",
    "Hola, ¿cómo estás? Muy bien, gracias.",
] * 3

PROMPTS = [
    ("once_upon", "Once upon a time"),
    ("korean", "안녕하세요, 오늘은 날씨가 좋"),
    ("long", "Once upon a time, an old fisherman wrote:\ndef main():\n    print(\"Hello\")"),
]


def build_vocab():
    merges = C.train_merges(CORPUS, N_MERGES)
    tokens = list(HEAD_SPECIALS)
    types = [3] * len(HEAD_SPECIALS)
    tokens += [C.B2U[b] for b in range(256)]
    types += [1] * 256
    tokens += [a + b for a, b in merges]
    types += [1] * len(merges)
    for text, special in TAIL_TOKENS:
        tokens.append(text)
        types.append(3 if special else 4)
    assert len(tokens) == N_VOCAB and len(set(tokens)) == N_VOCAB
    return tokens, types, merges


def build_weights(seed=SEED, n_head=N_HEAD, n_kv=N_KV, head_dim=HEAD_DIM):
    """HF-named float32 arrays (all bf16-exact; the embedding also f16-exact), drawn in this order
    from one PCG64 stream: embedding, then per layer q,k,v,o, q_norm,k_norm, post_attention_layernorm,
    gate,up,down, post_feedforward_layernorm, then model.norm."""
    rng = np.random.default_rng(seed)

    def mat(rows, cols):
        return C.bf16_round(rng.normal(0.0, 0.02, size=(rows, cols)))

    def norm(n):
        return C.bf16_round(rng.uniform(0.9, 1.1, size=n))

    w = {"model.embed_tokens.weight": C.bf16_f16_round(rng.normal(0.0, 0.02, size=(N_VOCAB, HIDDEN)))}
    for i in range(N_LAYER):
        p = f"model.layers.{i}."
        w[p + "self_attn.q_proj.weight"] = mat(n_head * head_dim, HIDDEN)
        w[p + "self_attn.k_proj.weight"] = mat(n_kv * head_dim, HIDDEN)
        w[p + "self_attn.v_proj.weight"] = mat(n_kv * head_dim, HIDDEN)
        w[p + "self_attn.o_proj.weight"] = mat(HIDDEN, n_head * head_dim)
        w[p + "self_attn.q_norm.weight"] = norm(head_dim)
        w[p + "self_attn.k_norm.weight"] = norm(head_dim)
        w[p + "post_attention_layernorm.weight"] = norm(HIDDEN)
        w[p + "mlp.gate_proj.weight"] = mat(FFN, HIDDEN)
        w[p + "mlp.up_proj.weight"] = mat(FFN, HIDDEN)
        w[p + "mlp.down_proj.weight"] = mat(HIDDEN, FFN)
        w[p + "post_feedforward_layernorm.weight"] = norm(HIDDEN)
    w["model.norm.weight"] = norm(HIDDEN)
    return w


# HF name -> GGUF name (llama.cpp mainline gguf-py MODEL_ARCH.EXAONE4 / tensor_mapping), no Q/K permutation
def gguf_name(hf: str) -> str:
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    parts = hf.split(".")
    i = parts[2]
    rest = ".".join(parts[3:])
    m = {
        "self_attn.q_proj.weight": "attn_q.weight",
        "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.v_proj.weight": "attn_v.weight",
        "self_attn.o_proj.weight": "attn_output.weight",
        "self_attn.q_norm.weight": "attn_q_norm.weight",
        "self_attn.k_norm.weight": "attn_k_norm.weight",
        "post_attention_layernorm.weight": "post_attention_norm.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight",
        "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight",
        "post_feedforward_layernorm.weight": "post_ffw_norm.weight",
    }[rest]
    return f"blk.{i}.{m}"


def hf_config(sliding: bool, n_head=N_HEAD, n_kv=N_KV, head_dim=HEAD_DIM) -> dict:
    eos = N_VOCAB - len(TAIL_TOKENS) + [t for t, _ in TAIL_TOKENS].index(EOS_TEXT)
    return {
        "architectures": ["Exaone4ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": BOS_ID,
        "eos_token_id": eos,
        "head_dim": head_dim,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FFN,
        "layer_types": LAYER_TYPES if sliding else ["full_attention"] * N_LAYER,
        "max_position_embeddings": CTX,
        "model_type": "exaone4",
        "num_attention_heads": n_head,
        "num_hidden_layers": N_LAYER,
        "num_key_value_heads": n_kv,
        "pad_token_id": PAD_ID,
        "rms_norm_eps": EPS,
        "rope_scaling": None,
        "rope_theta": THETA,
        "sliding_window": WINDOW if sliding else None,
        "sliding_window_pattern": "LLLG" if sliding else None,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.54.0",
        "use_cache": True,
        "vocab_size": N_VOCAB,
    }


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def tokenizer_json(tokens, types, merges) -> dict:
    n_head = len(HEAD_SPECIALS)
    added = []
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty in (3, 4):
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": ty == 3})
    vocab = {t: i for i, t in enumerate(tokens) if types[i] == 1}
    assert len(vocab) == N_VOCAB - n_head - len(TAIL_TOKENS)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            # full vocab including the added tokens, as HF tokenizers saves it
            "vocab": {t: i for i, t in enumerate(tokens)},
            "merges": [[a, b] for a, b in merges],
        },
    }


def tokenizer_config(tokens, types) -> dict:
    dec = {}
    for i, (t, ty) in enumerate(zip(tokens, types)):
        if ty in (3, 4):
            dec[str(i)] = {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                           "single_word": False, "special": ty == 3}
    return {
        "add_bos_token": False,
        "add_eos_token": False,
        "added_tokens_decoder": dec,
        "bos_token": "[BOS]",
        "clean_up_tokenization_spaces": False,
        "eos_token": EOS_TEXT,
        "model_max_length": CTX,
        "pad_token": "[PAD]",
        "tokenizer_class": "GPT2Tokenizer",
        "unk_token": "[UNK]",
    }


def write_gguf(path: Path, weights, tokens, types, merges, sliding: bool, gguf) -> None:
    """What llama.cpp mainline's convert_hf_to_gguf.py (Exaone4Model: TextModel.set_gguf_parameters +
    add_vocab_size + sliding window keys; set_vocab gpt2 + SpecialVocab) writes for hf_config(sliding),
    with token_embd F16 and every other tensor F32."""
    cfg = hf_config(sliding)
    arch = "exaone4"
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("exaone4-tiny" if sliding else "exaone4-tiny-full")
    w.add_block_count(N_LAYER)
    w.add_context_length(CTX)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_freq_base(THETA)
    w.add_layer_norm_rms_eps(EPS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_file_type(1)  # MOSTLY_F16
    w.add_vocab_size(N_VOCAB)
    if sliding:
        w.add_sliding_window(WINDOW)
        # mainline: add_sliding_window_pattern([t == "sliding_attention" for t in layer_types])
        w.add_array(f"{arch}.attention.sliding_window_pattern", [t == "sliding_attention" for t in cfg["layer_types"]])
    w.add_quantization_version(2)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("exaone4")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_bos_token_id(BOS_ID)
    w.add_eos_token_id(cfg["eos_token_id"])
    w.add_unk_token_id(UNK_ID)
    w.add_pad_token_id(PAD_ID)
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    for hf in sorted(weights):  # safetensors order, as the converter reads it
        a = weights[hf]
        if hf == "model.embed_tokens.weight":
            a16 = a.astype(np.float16)
            assert np.array_equal(a16.astype(np.float32), a)
            w.add_tensor(gguf_name(hf), a16)
        else:
            w.add_tensor(gguf_name(hf), np.ascontiguousarray(a, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


OLMO2_SEED = SEED + 1


def write_olmo2_check(outdir: Path, tokens, types, merges, gguf) -> None:
    """Cross-check model for the numpy forward: EXAONE 4 with ONE query head and ONE KV head of
    head_dim 64 (= hidden), no window (RoPE on every layer). With a single head EXAONE 4's per-head
    q/k RMSNorm is OLMo2's whole-projection q/k RMSNorm, and everything else (post-norm-only blocks,
    norm before NEOX RoPE, SwiGLU, scale head_dim^-0.5) is llama.cpp b4747's build_olmo2. Writes
    exaone4-h1-hf/ (config + BF16 safetensors) and exaone4-h1-as-olmo2.gguf (arch olmo2; b4747's OLMo2
    requires an output tensor: output.weight = the embedding, stored F32 because with an F16 output
    b4747's CPU matmul rounds the activations to f16, which costs 1.6e-4 in the logits)."""
    outdir.mkdir(parents=True, exist_ok=True)
    w = build_weights(OLMO2_SEED, 1, 1, HIDDEN)
    hf = outdir / "exaone4-h1-hf"
    hf.mkdir(exist_ok=True)
    write_json(hf / "config.json", hf_config(False, 1, 1, HIDDEN))
    C.write_safetensors_bf16(hf / "model.safetensors", w)
    g = gguf.GGUFWriter(str(outdir / "exaone4-h1-as-olmo2.gguf"), "olmo2")
    g.add_block_count(N_LAYER)
    g.add_context_length(CTX)
    g.add_embedding_length(HIDDEN)
    g.add_feed_forward_length(FFN)
    g.add_head_count(1)
    g.add_head_count_kv(1)
    g.add_rope_freq_base(THETA)
    g.add_layer_norm_rms_eps(EPS)
    g.add_file_type(1)
    g.add_tokenizer_model("gpt2")
    g.add_tokenizer_pre("gpt-2")
    g.add_token_list(tokens)
    g.add_token_types(types)
    g.add_token_merges([f"{a} {b}" for a, b in merges])
    g.add_bos_token_id(BOS_ID)
    g.add_eos_token_id(hf_config(False)["eos_token_id"])
    g.add_add_bos_token(False)
    for name in sorted(w):
        a = w[name]
        if name == "model.embed_tokens.weight":
            g.add_tensor("token_embd.weight", a.astype(np.float16))
            g.add_tensor("output.weight", np.ascontiguousarray(a, dtype=np.float32))
        else:
            g.add_tensor(gguf_name(name), np.ascontiguousarray(a, dtype=np.float32))
    g.write_header_to_file()
    g.write_kv_data_to_file()
    g.write_tensors_to_file()
    g.close()


def write_tokcheck_gguf(path: Path, tokens, types, merges, gguf) -> None:
    """Vocab-only GGUF with arch 'llama' and pre 'gpt-2' (pre type GPT2, which llama.cpp maps 'exaone4' to),
    so llama.cpp b4747 (which has no exaone4) can tokenize with exactly this vocabulary."""
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_context_length(CTX)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_layer_norm_rms_eps(EPS)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")  # b4747 spells GPT2's pre type "gpt-2"
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_bos_token_id(BOS_ID)
    w.add_eos_token_id(hf_config(True)["eos_token_id"])
    w.add_unk_token_id(UNK_ID)
    w.add_pad_token_id(PAD_ID)
    w.add_add_bos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--tokcheck-gguf", default=None)
    ap.add_argument("--tokcheck-bin", default=None, help="exaone4_tokcheck built against llama.cpp: compare")
    ap.add_argument("--olmo2-check", default=None, help="DIR: write the single-head OLMo2 cross-check model")
    args = ap.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    gguf = C.import_gguf()

    tokens, types, merges = build_vocab()
    vocab = {t: i for i, t in enumerate(tokens) if types[i] == 1}
    ranks = {p: i for i, p in enumerate(merges)}
    weights = build_weights()

    hf = out / "exaone4-tiny-hf"
    hf.mkdir(exist_ok=True)
    write_json(hf / "config.json", hf_config(True))
    cfg = hf_config(True)
    write_json(hf / "generation_config.json", {"bos_token_id": BOS_ID, "eos_token_id": cfg["eos_token_id"],
                                               "pad_token_id": PAD_ID, "do_sample": False,
                                               "transformers_version": "4.54.0"})
    C.write_safetensors_bf16(hf / "model.safetensors", weights)
    write_json(hf / "tokenizer.json", tokenizer_json(tokens, types, merges))
    write_json(hf / "tokenizer_config.json", tokenizer_config(tokens, types))

    write_gguf(out / "exaone4-tiny.gguf", weights, tokens, types, merges, True, gguf)
    write_gguf(out / "exaone4-tiny-full.gguf", weights, tokens, types, merges, False, gguf)

    prompts = []
    for name, text in PROMPTS:
        ids = C.bpe_encode(text, vocab, ranks)
        prompts.append({"name": name, "prompt": text, "prompt_ids": ids})
    write_json(out / "prompts.json", {
        "how": "tools/exaone4/exaone4_common.py bpe_encode (GPT-2 split + byte-level BPE with this vocabulary's "
               "merges), no BOS (add_bos_token false), no special-token parsing; checked equal to llama.cpp "
               "b4747's llama_tokenize(add_special=true, parse_special=false) on the vocab-only check GGUF "
               "(tools/exaone4/exaone4_tokcheck.cpp)",
        "prompts": prompts})
    for p in prompts:
        print(f"{p['name']}: {len(p['prompt_ids'])} ids {p['prompt_ids']}")
    if args.olmo2_check:
        write_olmo2_check(Path(args.olmo2_check), tokens, types, merges, gguf)
    if args.tokcheck_gguf:
        write_tokcheck_gguf(Path(args.tokcheck_gguf), tokens, types, merges, gguf)
        if args.tokcheck_bin:
            tokcheck(args.tokcheck_bin, args.tokcheck_gguf, tokens, types, vocab, ranks)


TOKCHECK_EXTRA = [
    "Hello world", "  two spaces", "tabs\tand\nnewlines\n\n  x", "trailing space ", "it's we'll they'd",
    "numbers 12345 and 3.14159", "émigré café naïve", "😀 emoji 🎉!", "日本語のテキスト", "¿Qué tal?",
    "a\u00a0b", "mixed안녕abc123",
]


def tokcheck(binary, gguf_path, tokens, types, vocab, ranks) -> None:
    """Run exaone4_tokcheck (llama.cpp) and compare ids and every token's piece with this file's encoder."""
    import subprocess
    import tempfile

    texts = [t for _, t in PROMPTS] + sorted(set(CORPUS)) + TOKCHECK_EXTRA
    with tempfile.NamedTemporaryFile("w", suffix=".hex", delete=False) as f:
        for t in texts:
            f.write(t.encode("utf-8").hex() + "\n")
        hexfile = f.name
    res = subprocess.run([binary, gguf_path, hexfile], capture_output=True, text=True, check=True)
    lines = res.stdout.splitlines()
    got_t = [[int(x) for x in ln.split()[1:]] for ln in lines if ln.startswith("T")]
    got_p = {int(ln.split()[1]): (ln.split()[2] if len(ln.split()) > 2 else "") for ln in lines if ln.startswith("P")}
    bad = 0
    for t, g in zip(texts, got_t):
        mine = C.bpe_encode(t, vocab, ranks)
        if mine != g:
            bad += 1
            print(f"TOKCHECK MISMATCH {t!r}: mine {mine} llama.cpp {g}")
    pb = sum(C.piece_bytes(tokens[i], types[i]).hex() != got_p[i] for i in range(len(tokens)))
    print(f"tokcheck: {len(texts) - bad}/{len(texts)} texts tokenized identically, "
          f"{len(tokens) - pb}/{len(tokens)} pieces identical")
    if bad or pb:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
