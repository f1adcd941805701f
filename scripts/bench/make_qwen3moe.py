# A Qwen3-30B-A3B-shaped GGUF with random weights and N of its 48 layers (default 12): hidden 2048,
# 128 experts of width 768, top-8, 32 query / 4 KV heads of 128, q/k norms, rope base 1e6, the Qwen
# vocabulary (151936) and template of the shared qwen3moe-tiny.gguf. Weights are written as Q8_0
# (random int8 values, f16 block scales ~ N(0, 0.02) per value) so the file can be re-quantized
# into the mix a real Q4_K_M has by ik_llama.cpp's llama-quantize:
#   IK_GGUF_PY=<ik_llama.cpp>/gguf-py QWEN3MOE_TINY=<shared>/models/arch/qwen3moe-tiny.gguf \
#     /usr/bin/python3 scripts/bench/make_qwen3moe.py OUT-q8.gguf [layers]
#   <ik build>/bin/llama-quantize --allow-requantize OUT-q8.gguf OUT-Q4_K_M.gguf Q4_K_M
import os, sys
import numpy as np
sys.path.insert(0, os.environ.get('IK_GGUF_PY', '/work/bench/ik/gguf-py'))  # ik_llama.cpp's gguf-py
import gguf

out = sys.argv[1]
L = int(sys.argv[2]) if len(sys.argv) > 2 else 12
H, NH, NKV, HD, E, K, FF = 2048, 32, 4, 128, 128, 8, 768
rng = np.random.default_rng(34)
src = gguf.GGUFReader(os.environ.get('QWEN3MOE_TINY', '../shared/models/arch/qwen3moe-tiny.gguf'))
w = gguf.GGUFWriter(out, 'qwen3moe')
a = 'qwen3moe.'
w.add_uint32(a + 'block_count', L); w.add_uint32(a + 'context_length', 40960)
w.add_uint32(a + 'embedding_length', H); w.add_uint32(a + 'feed_forward_length', 6144)
w.add_uint32(a + 'attention.head_count', NH); w.add_uint32(a + 'attention.head_count_kv', NKV)
w.add_float32(a + 'rope.freq_base', 1e6); w.add_float32(a + 'attention.layer_norm_rms_epsilon', 1e-6)
w.add_uint32(a + 'expert_count', E); w.add_uint32(a + 'expert_used_count', K)
w.add_uint32(a + 'attention.key_length', HD); w.add_uint32(a + 'attention.value_length', HD)
w.add_uint32(a + 'expert_feed_forward_length', FF)
w.add_uint32('general.file_type', 7)
f = src.fields
w.add_tokenizer_model('gpt2'); w.add_tokenizer_pre('qwen2')
w.add_token_list([bytes(f['tokenizer.ggml.tokens'].parts[i]) for i in f['tokenizer.ggml.tokens'].data])
w.add_token_types([int(f['tokenizer.ggml.token_type'].parts[i][0]) for i in f['tokenizer.ggml.token_type'].data])
w.add_token_merges([bytes(f['tokenizer.ggml.merges'].parts[i]) for i in f['tokenizer.ggml.merges'].data])
w.add_bos_token_id(151643); w.add_eos_token_id(151645); w.add_pad_token_id(151643)
w.add_add_bos_token(False)
w.add_chat_template(bytes(f['tokenizer.chat_template'].parts[-1]).decode())
V = len(f['tokenizer.ggml.tokens'].data)


def q8(*shape):
    """Q8_0 blocks over the last axis: per 32 values an f16 scale and 32 int8 values."""
    *lead, cols = shape
    nb = cols // 32
    b = np.empty((*lead, nb, 34), dtype=np.uint8)
    d = np.full((*lead, nb), 0.02 * 2.0 / 127.0, dtype=np.float16)
    b[..., 0:2] = d.view(np.uint8).reshape(*lead, nb, 2)
    b[..., 2:] = rng.integers(-127, 128, size=(*lead, nb, 32), dtype=np.int8).view(np.uint8)
    return b.reshape(*lead, nb * 34)


def norm(n):
    return rng.uniform(0.9, 1.1, n).astype(np.float32)


Q8 = gguf.GGMLQuantizationType.Q8_0
w.add_tensor('token_embd.weight', q8(V, H), raw_dtype=Q8)
w.add_tensor('output_norm.weight', norm(H))
w.add_tensor('output.weight', q8(V, H), raw_dtype=Q8)
for l in range(L):
    p = f'blk.{l}.'
    w.add_tensor(p + 'attn_norm.weight', norm(H))
    w.add_tensor(p + 'attn_q.weight', q8(NH * HD, H), raw_dtype=Q8)
    w.add_tensor(p + 'attn_k.weight', q8(NKV * HD, H), raw_dtype=Q8)
    w.add_tensor(p + 'attn_v.weight', q8(NKV * HD, H), raw_dtype=Q8)
    w.add_tensor(p + 'attn_output.weight', q8(H, NH * HD), raw_dtype=Q8)
    w.add_tensor(p + 'attn_q_norm.weight', norm(HD)); w.add_tensor(p + 'attn_k_norm.weight', norm(HD))
    w.add_tensor(p + 'ffn_norm.weight', norm(H))
    w.add_tensor(p + 'ffn_gate_inp.weight', (rng.standard_normal((E, H), dtype=np.float32) * 0.3))
    w.add_tensor(p + 'ffn_gate_exps.weight', q8(E, FF, H), raw_dtype=Q8)
    w.add_tensor(p + 'ffn_up_exps.weight', q8(E, FF, H), raw_dtype=Q8)
    w.add_tensor(p + 'ffn_down_exps.weight', q8(E, H, FF), raw_dtype=Q8)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
