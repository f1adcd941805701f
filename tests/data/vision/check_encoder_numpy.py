#!/usr/bin/python3
"""Independent float64 numpy forward of the Gemma 3 vision encoder + projector (as ik's clip.cpp
build_siglip computes it for projector "gemma3"), checked against golden.json / golden.f32.

Usage (in this folder): PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 check_encoder_numpy.py
Prints the max abs difference per image and preprocessing (measured: <= 7.8e-7).
"""
import json

import numpy as np
from gguf import GGUFReader

r = GGUFReader("gemma3-tiny-mmproj.gguf")
W = {t.name: np.array(t.data).astype(np.float64).reshape([int(x) for x in reversed(t.shape)]) for t in r.tensors}
g = json.load(open("golden.json"))
blob = np.fromfile("golden.f32", dtype="<f4")
EPS = 1e-6


def get(f):
    return blob[f["offset"]:f["offset"] + f["count"]]


def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def encode(img):  # img: (32, 32, 3) HWC floats as clip_image_f32 holds them
    img = img.astype(np.float16).astype(np.float64)  # ggml_conv_2d's im2col is F16: pixels rounded to half
    K = W["v.patch_embd.weight"]  # (32 out, 3 ch, 4 ky, 4 kx)
    patches = img.reshape(8, 4, 8, 4, 3).transpose(0, 2, 4, 1, 3).reshape(64, 48)  # patch p = py*8+px
    x = patches @ K.reshape(32, 48).T + W["v.patch_embd.bias"] + W["v.position_embd.weight"]
    for il in range(2):
        b = f"v.blk.{il}."
        h = layer_norm(x, W[b + "ln1.weight"], W[b + "ln1.bias"])
        q, k, v = (h @ W[b + n + ".weight"].T + W[b + n + ".bias"] for n in ("attn_q", "attn_k", "attn_v"))
        o = np.zeros_like(q)
        for hd in range(2):  # head hd = dims 16*hd .. 16*hd+15, no mask (bidirectional), scale 1/sqrt(16)
            s = slice(16 * hd, 16 * hd + 16)
            a = q[:, s] @ k[:, s].T / 4.0
            a = np.exp(a - a.max(-1, keepdims=True))
            o[:, s] = (a / a.sum(-1, keepdims=True)) @ v[:, s]
        x = x + o @ W[b + "attn_out.weight"].T + W[b + "attn_out.bias"]
        h = layer_norm(x, W[b + "ln2.weight"], W[b + "ln2.bias"])
        h = gelu_tanh(h @ W[b + "ffn_up.weight"].T + W[b + "ffn_up.bias"])
        x = x + h @ W[b + "ffn_down.weight"].T + W[b + "ffn_down.bias"]
    x = layer_norm(x, W["v.post_ln.weight"], W["v.post_ln.bias"])
    x = x.reshape(4, 2, 4, 2, 32).mean(axis=(1, 3)).reshape(16, 32)  # 2x2 avg pool; token t = qy*4+qx
    x = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + EPS) * W["mm.soft_emb_norm.weight"]
    return x @ W["mm.input_projection.weight"]  # numpy (32, 64) = ggml ne [64, 32]


for im in g["images"]:
    for pre, emb in (("ik_preproc", "ik_embd"), ("hf_preproc", "hf_embd")):
        if pre in im:
            img = get(im[pre]["floats"]).reshape(32, 32, 3).astype(np.float64)
            ref = get(im[emb]["floats"]).reshape(16, 64)
            print(f"{im['image']:12s} {pre}: max abs diff {np.abs(encode(img) - ref).max():.2e}")
