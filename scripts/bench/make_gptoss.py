# A gpt-oss-20b-shaped GGUF with random weights, N layers (default 8, so the file stays under ~6
# GB): hidden 2880, 64 query / 8 KV heads of 64, 32 experts of width 2880, top-4, window 128 on even
# layers, YaRN factor 32 from 4096, rope base 150000; experts MXFP4 (random nibbles, E8M0
# exponents 119..122), attention, embedding and classifier F16 (N(0, 0.02)), norms, biases and
# sinks F32; the o200k Harmony vocabulary and template of the shared gptoss-tiny.gguf.
# Usage: IK_GGUF_PY=<ik_llama.cpp>/gguf-py GPTOSS_TINY=<shared>/models/arch/gptoss-tiny.gguf \
#          /usr/bin/python3 scripts/bench/make_gptoss.py OUT.gguf [layers]
import os, sys
import numpy as np
sys.path.insert(0, os.environ.get('IK_GGUF_PY', '/work/bench/ik/gguf-py'))  # ik_llama.cpp's gguf-py
import gguf

out = sys.argv[1]
L = int(sys.argv[2]) if len(sys.argv) > 2 else 8
H, NH, NKV, HD, E, K, FF, W = 2880, 64, 8, 64, 32, 4, 2880, 128
rng = np.random.default_rng(20)
src = gguf.GGUFReader(os.environ.get('GPTOSS_TINY', '../shared/models/arch/gptoss-tiny.gguf'))
w = gguf.GGUFWriter(out, 'gpt-oss')
a = 'gpt-oss.'
w.add_uint32(a + 'block_count', L); w.add_uint32(a + 'context_length', 131072)
w.add_uint32(a + 'embedding_length', H); w.add_uint32(a + 'feed_forward_length', FF)
w.add_uint32(a + 'attention.head_count', NH); w.add_uint32(a + 'attention.head_count_kv', NKV)
w.add_float32(a + 'rope.freq_base', 150000.0); w.add_float32(a + 'attention.layer_norm_rms_epsilon', 1e-5)
w.add_uint32(a + 'expert_count', E); w.add_uint32(a + 'expert_used_count', K)
w.add_uint32(a + 'attention.key_length', HD); w.add_uint32(a + 'attention.value_length', HD)
w.add_uint32(a + 'attention.sliding_window', W); w.add_uint32(a + 'expert_feed_forward_length', FF)
w.add_string(a + 'rope.scaling.type', 'yarn'); w.add_float32(a + 'rope.scaling.factor', 32.0)
w.add_uint32(a + 'rope.scaling.original_context_length', 4096)
w.add_uint32('general.file_type', 38)
f = src.fields
w.add_tokenizer_model('gpt2'); w.add_tokenizer_pre('gpt-4o')
w.add_token_list([bytes(f['tokenizer.ggml.tokens'].parts[i]) for i in f['tokenizer.ggml.tokens'].data])
w.add_token_types([int(f['tokenizer.ggml.token_type'].parts[i][0]) for i in f['tokenizer.ggml.token_type'].data])
w.add_token_merges([bytes(f['tokenizer.ggml.merges'].parts[i]) for i in f['tokenizer.ggml.merges'].data])
w.add_bos_token_id(199998); w.add_eos_token_id(200002); w.add_pad_token_id(199999)
w.add_chat_template(bytes(f['tokenizer.chat_template'].parts[-1]).decode())
V = len(f['tokenizer.ggml.tokens'].data)


def f16(rows, cols):
    return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)


def f32(*shape, sd=0.02):
    return (rng.standard_normal(shape, dtype=np.float32) * sd).astype(np.float32)


def norm(n):
    return rng.uniform(0.9, 1.1, n).astype(np.float32)


def mxfp4(experts, rows, cols):
    nb = cols // 32
    b = rng.integers(0, 256, size=(experts, rows, nb, 17), dtype=np.uint8)
    b[..., 0] = rng.integers(119, 123, size=(experts, rows, nb), dtype=np.uint8)
    return b.reshape(experts, rows, nb * 17)


w.add_tensor('token_embd.weight', f16(V, H))
w.add_tensor('output_norm.weight', norm(H))
w.add_tensor('output.weight', f16(V, H))
for l in range(L):
    p = f'blk.{l}.'
    w.add_tensor(p + 'attn_norm.weight', norm(H))
    w.add_tensor(p + 'attn_q.weight', f16(NH * HD, H)); w.add_tensor(p + 'attn_q.bias', f32(NH * HD))
    w.add_tensor(p + 'attn_k.weight', f16(NKV * HD, H)); w.add_tensor(p + 'attn_k.bias', f32(NKV * HD))
    w.add_tensor(p + 'attn_v.weight', f16(NKV * HD, H)); w.add_tensor(p + 'attn_v.bias', f32(NKV * HD))
    w.add_tensor(p + 'attn_output.weight', f16(H, NH * HD)); w.add_tensor(p + 'attn_output.bias', f32(H))
    w.add_tensor(p + 'attn_sinks.weight', rng.uniform(-2, 2, NH).astype(np.float32))
    w.add_tensor(p + 'post_attention_norm.weight', norm(H))
    w.add_tensor(p + 'ffn_gate_inp.weight', f32(E, H, sd=0.3)); w.add_tensor(p + 'ffn_gate_inp.bias', f32(E))
    for m, (rows, cols) in (('gate', (FF, H)), ('up', (FF, H)), ('down', (H, FF))):
        w.add_tensor(p + f'ffn_{m}_exps.weight', mxfp4(E, rows, cols), raw_dtype=gguf.GGMLQuantizationType.MXFP4)
        w.add_tensor(p + f'ffn_{m}_exps.bias', f32(E, rows))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
