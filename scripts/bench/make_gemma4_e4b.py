# A Gemma-4-E4B-shaped GGUF with random weights, N layers (default 12): Q4_K matrices (random
# blocks with sane scales), F32 norms. Assumed E4B shape: hidden 2560, 8 heads, 2 KV heads, local
# head 256 / global 512, MLP 10240, per-layer input 256, vocab 262144, window 512, layer l global
# iff (l+1) % 6 == 0, about 18/42 of the layers (rounded so that the last own-KV layers are local,
# global, as ik_llama.cpp needs) sharing KV, rope 1e4 / 1e6.
# Usage: IK_GGUF_PY=<ik_llama.cpp>/gguf-py SPM_VOCAB=<shared>/models/vocab/ggml-vocab-llama-spm.gguf \
#          /usr/bin/python3 scripts/bench/make_gemma4_e4b.py OUT.gguf [layers]
import sys, numpy as np
sys.path.insert(0, __import__('os').environ.get('IK_GGUF_PY', '/work/bench/ik/gguf-py'))  # ik_llama.cpp's gguf-py
import gguf
out = sys.argv[1]; L = int(sys.argv[2]) if len(sys.argv) > 2 else 12
H, NH, NKV, HDL, HDG, FF, P, V, W = 2560, 8, 2, 256, 512, 10240, 256, 262144, 512
SHARED = L - 6 * max(1, round((L - round(L * 18 / 42)) / 6))  # ik needs the last own-KV layers local, global
pattern = [(l + 1) % 6 != 0 for l in range(L)]
rng = np.random.default_rng(7)
src = gguf.GGUFReader(__import__('os').environ.get('SPM_VOCAB', '../shared/models/vocab/ggml-vocab-llama-spm.gguf'))
w = gguf.GGUFWriter(out, 'gemma4')
a = 'gemma4.'
w.add_uint32(a+'context_length', 131072); w.add_uint32(a+'embedding_length', H)
w.add_uint32(a+'block_count', L); w.add_uint32(a+'feed_forward_length', FF)
w.add_uint32(a+'attention.head_count', NH); w.add_uint32(a+'attention.head_count_kv', NKV)
w.add_float32(a+'attention.layer_norm_rms_epsilon', 1e-6)
w.add_uint32(a+'attention.sliding_window', W); w.add_array(a+'attention.sliding_window_pattern', pattern)
w.add_uint32(a+'attention.shared_kv_layers', SHARED); w.add_uint32(a+'embedding_length_per_layer_input', P)
w.add_uint32(a+'attention.key_length', HDG); w.add_uint32(a+'attention.value_length', HDG)
w.add_uint32(a+'attention.key_length_swa', HDL); w.add_uint32(a+'attention.value_length_swa', HDL)
w.add_uint32(a+'rope.dimension_count', HDG); w.add_uint32(a+'rope.dimension_count_swa', HDL)
w.add_float32(a+'rope.freq_base', 1e6); w.add_float32(a+'rope.freq_base_swa', 10000.0)
w.add_float32(a+'final_logit_softcapping', 30.0)
w.add_uint32('general.file_type', 15)
f = src.fields
toks = [bytes(f['tokenizer.ggml.tokens'].parts[i]).decode('utf-8', 'surrogateescape') for i in f['tokenizer.ggml.tokens'].data]
scores = [float(f['tokenizer.ggml.scores'].parts[i][0]) for i in f['tokenizer.ggml.scores'].data]
types = [int(f['tokenizer.ggml.token_type'].parts[i][0]) for i in f['tokenizer.ggml.token_type'].data]
pad = V - len(toks)
w.add_tokenizer_model('llama'); w.add_token_list(toks + [f'[PAD{i}]' for i in range(pad)])
w.add_token_scores(scores + [0.0] * pad); w.add_token_types(types + [5] * pad)
w.add_bos_token_id(1); w.add_eos_token_id(2); w.add_add_bos_token(True)
def q4k(rows, cols):
    nb = rows * cols // 256
    b = rng.integers(0, 256, size=(nb, 144), dtype=np.uint8)
    b[:, 0:2] = np.frombuffer(np.float16(0.0015).tobytes(), dtype=np.uint8)
    b[:, 2:4] = np.frombuffer(np.float16(0.0008).tobytes(), dtype=np.uint8)
    return b.reshape(rows, cols // 256 * 144)
def T(name, rows, cols): w.add_tensor(name, q4k(rows, cols), raw_dtype=gguf.GGMLQuantizationType.Q4_K)
def norm(n): return rng.uniform(0.9, 1.1, n).astype(np.float32)
T('token_embd.weight', V, H)
T('per_layer_token_embd.weight', V, L * P)
T('per_layer_model_proj.weight', L * P, H)
w.add_tensor('per_layer_proj_norm.weight', norm(P))
w.add_tensor('rope_freqs.weight', np.array([1.0] * (HDG // 8) + [1e30] * (HDG // 2 - HDG // 8), dtype=np.float32))
w.add_tensor('output_norm.weight', norm(H))
for l in range(L):
    p = f'blk.{l}.'; hd = HDL if pattern[l] else HDG
    w.add_tensor(p+'attn_norm.weight', norm(H))
    T(p+'attn_q.weight', NH * hd, H)
    if l < L - SHARED:
        T(p+'attn_k.weight', NKV * hd, H); T(p+'attn_v.weight', NKV * hd, H)
        w.add_tensor(p+'attn_k_norm.weight', norm(hd))
    w.add_tensor(p+'attn_q_norm.weight', norm(hd))
    T(p+'attn_output.weight', H, NH * hd)
    w.add_tensor(p+'post_attention_norm.weight', norm(H)); w.add_tensor(p+'ffn_norm.weight', norm(H))
    T(p+'ffn_gate.weight', FF, H); T(p+'ffn_up.weight', FF, H); T(p+'ffn_down.weight', H, FF)
    w.add_tensor(p+'post_ffw_norm.weight', norm(H))
    w.add_tensor(p+'layer_output_scale.weight', rng.uniform(0.5, 1.0, 1).astype(np.float32))
    T(p+'inp_gate.weight', P, H); T(p+'proj.weight', H, P); w.add_tensor(p+'post_norm.weight', norm(H))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
print('wrote', out)
