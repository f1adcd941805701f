# A Qwen3.5-4B-shaped GGUF (`qwen35`) with random weights: hidden 2560, 32 layers (24 Gated DeltaNet +
# 8 gated attention: layer l is attention iff (l + 1) % 4 == 0), FFN 9216, 16 heads / 4 KV heads of
# 256, partial rotary 64 dims with sections [11, 11, 10, 0], rope base 1e7; DeltaNet 16 key / 32
# value heads of 128, conv 4; tied embeddings. Matrices Q4_K (random blocks with sane scales; the
# token table too; spread ~0.02), ssm_alpha / ssm_beta, conv taps, norms and the decay parameters
# (Mamba's initialisation) F32; the Qwen
# vocabulary (151936) and template of the shared qwen35-tiny.gguf.
# Usage: IK_GGUF_PY=<ik_llama.cpp>/gguf-py QWEN35_TINY=<shared>/models/arch/qwen35-tiny.gguf \
#          /usr/bin/python3 scripts/bench/make_qwen35.py OUT.gguf [layers]
import os, sys
import numpy as np
sys.path.insert(0, os.environ.get('IK_GGUF_PY', '/work/bench/ik/gguf-py'))  # ik_llama.cpp's gguf-py
import gguf

out = sys.argv[1]
L = int(sys.argv[2]) if len(sys.argv) > 2 else 32
H, FF, NH, NKV, HD, ROT = 2560, 9216, 16, 4, 256, 64
NK, NV, DK, DV, CONV = 16, 32, 128, 128, 4
CD = 2 * NK * DK + NV * DV
rng = np.random.default_rng(35)
src = gguf.GGUFReader(os.environ.get('QWEN35_TINY', '../shared/models/arch/qwen35-tiny.gguf'))
w = gguf.GGUFWriter(out, 'qwen35')
a = 'qwen35.'
w.add_uint32(a + 'block_count', L); w.add_uint32(a + 'context_length', 262144)
w.add_uint32(a + 'embedding_length', H); w.add_uint32(a + 'feed_forward_length', FF)
w.add_uint32(a + 'attention.head_count', NH); w.add_uint32(a + 'attention.head_count_kv', NKV)
w.add_float32(a + 'rope.freq_base', 1e7); w.add_float32(a + 'attention.layer_norm_rms_epsilon', 1e-6)
w.add_uint32(a + 'attention.key_length', HD); w.add_uint32(a + 'attention.value_length', HD)
w.add_uint32(a + 'rope.dimension_count', ROT); w.add_array(a + 'rope.dimension_sections', [11, 11, 10, 0])
w.add_uint32(a + 'ssm.conv_kernel', CONV); w.add_uint32(a + 'ssm.state_size', DK)
w.add_uint32(a + 'ssm.group_count', NK); w.add_uint32(a + 'ssm.time_step_rank', NV)
w.add_uint32(a + 'ssm.inner_size', NV * DV); w.add_uint32(a + 'full_attention_interval', 4)
w.add_uint32('general.file_type', 15)
f = src.fields
w.add_tokenizer_model('gpt2'); w.add_tokenizer_pre('qwen2')
w.add_token_list([bytes(f['tokenizer.ggml.tokens'].parts[i]) for i in f['tokenizer.ggml.tokens'].data])
w.add_token_types([int(f['tokenizer.ggml.token_type'].parts[i][0]) for i in f['tokenizer.ggml.token_type'].data])
w.add_token_merges([bytes(f['tokenizer.ggml.merges'].parts[i]) for i in f['tokenizer.ggml.merges'].data])
w.add_eos_token_id(151645); w.add_pad_token_id(151643); w.add_bos_token_id(151643); w.add_add_bos_token(False)
w.add_chat_template(bytes(f['tokenizer.chat_template'].parts[-1]).decode())
V = len(f['tokenizer.ggml.tokens'].data)


def q4k(rows, cols):
    nb = rows * cols // 256
    b = rng.integers(0, 256, size=(nb, 144), dtype=np.uint8)
    # d and dmin such that the weights' spread is ~0.02, as N(0, 0.02) weights quantized (larger
    # weights blow the DeltaNet's decay into denormal range, where every engine crawls).
    b[:, 0:2] = np.frombuffer(np.float16(0.0001).tobytes(), dtype=np.uint8)
    b[:, 2:4] = np.frombuffer(np.float16(0.00005).tobytes(), dtype=np.uint8)
    return b.reshape(rows, cols // 256 * 144)


def T(name, rows, cols):
    w.add_tensor(name, q4k(rows, cols), raw_dtype=gguf.GGMLQuantizationType.Q4_K)


def f32(*shape, sd=0.02):
    return (rng.standard_normal(shape, dtype=np.float32) * sd).astype(np.float32)


def norm(n):
    return rng.uniform(0.9, 1.1, n).astype(np.float32)


T('token_embd.weight', V, H)
w.add_tensor('output_norm.weight', norm(H))
for l in range(L):
    p = f'blk.{l}.'
    w.add_tensor(p + 'attn_norm.weight', norm(H))
    if (l + 1) % 4 == 0:
        T(p + 'attn_q.weight', 2 * NH * HD, H)
        T(p + 'attn_k.weight', NKV * HD, H); T(p + 'attn_v.weight', NKV * HD, H)
        T(p + 'attn_output.weight', H, NH * HD)
        w.add_tensor(p + 'attn_q_norm.weight', norm(HD)); w.add_tensor(p + 'attn_k_norm.weight', norm(HD))
    else:
        T(p + 'attn_qkv.weight', CD, H); T(p + 'attn_gate.weight', NV * DV, H)
        w.add_tensor(p + 'ssm_beta.weight', f32(NV, H)); w.add_tensor(p + 'ssm_alpha.weight', f32(NV, H))
        w.add_tensor(p + 'ssm_conv1d.weight', f32(CD, CONV, sd=0.3))
        # Mamba's initialisation, as transformers' Qwen3.5 uses: A ~ U(1, 16), dt ~ logU(1e-3, 0.1)
        # with dt_bias its inverse softplus.
        dt = np.exp(rng.uniform(np.log(1e-3), np.log(0.1), NV))
        w.add_tensor(p + 'ssm_dt.bias', (dt + np.log(-np.expm1(-dt))).astype(np.float32))
        w.add_tensor(p + 'ssm_a', -rng.uniform(1, 16, NV).astype(np.float32))
        w.add_tensor(p + 'ssm_norm.weight', norm(DV))
        T(p + 'ssm_out.weight', H, NV * DV)
    w.add_tensor(p + 'post_attention_norm.weight', norm(H))
    T(p + 'ffn_gate.weight', FF, H); T(p + 'ffn_up.weight', FF, H); T(p + 'ffn_down.weight', H, FF)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
