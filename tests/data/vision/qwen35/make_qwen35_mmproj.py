#!/usr/bin/python3
"""Writes qwen35-tiny-mmproj.gguf: a tiny random-weight Qwen3.5 / Qwen3.6 vision projector (HF
Qwen3_5ForConditionalGeneration's `visual` = Qwen3_5VisionModel = Qwen3VLVisionModel WITHOUT the deepstack mergers).

Usage (ik_llama.cpp's gguf-py on the path; see README.md):
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_qwen35_mmproj.py [<out_dir>]

Keys and tensor names as llama.cpp's convert_hf_to_gguf.py (Qwen3VLVisionModel + MmprojModel, which also serves
Qwen3.5's vision tower) writes them, projector type "qwen3vl_merger", and as ik_llama.cpp's examples/mtmd/clip.cpp
reads them. No `v.deepstack.*` tensors: ik counts deepstack layers by the presence of `v.deepstack.N.fc1.weight`,
so clip_n_mmproj_embd = mm.2 width = 64 (no deepstack floats). `clip.vision.is_deepstack_layers` is written all
false (what the converter writes when deepstack_visual_indexes is empty; ik does not read the key).
HF -> GGUF name map (same as the Qwen3-VL one, minus deepstack):
  visual.patch_embed.proj.weight (Conv3d, kt=2) -> v.patch_embd.weight (frame 0), v.patch_embd.weight.1 (frame 1)
  visual.patch_embed.proj.bias                  -> v.patch_embd.bias
  visual.pos_embed.weight (num_pos, width)      -> v.position_embd.weight
  visual.blocks.N.norm1 / norm2                 -> v.blk.N.ln1 / ln2
  visual.blocks.N.attn.qkv / attn.proj          -> v.blk.N.attn_qkv / attn_out
  visual.blocks.N.mlp.linear_fc1 / linear_fc2   -> v.blk.N.ffn_up / ffn_down
  visual.merger.norm / linear_fc1 / linear_fc2  -> v.post_ln / mm.0 / mm.2
Shape, deliberately different from ../qwen3vl/qwen3vl-tiny-mmproj.gguf wherever HF Qwen3-VL vision and ik allow:
width 48 (not 32), 2 heads of 24 (not 16: the vision rope has 6 frequencies per axis, not 4), depth 2 (not 3),
MLP 64 (not 48), learned position grid 5x5 (not 6x6: no test image has a 5x5 patch grid, so every image
interpolates, at non-integer align-corners coordinates), no deepstack (not [0, 1]), seed 20261208. Same: patch 4,
temporal patch 2, spatial merge 2 (ik's build_qwen3vl hard-codes the 2x2 merge), mean = std = 0.5, LayerNorm eps
1e-6, out width 64 = qwen35-tiny.gguf's hidden size. Matrices F16, the rest F32.
"""
import os
import sys

import numpy as np
from gguf import GGUFWriter, GGMLQuantizationType

PATCH = 4
MERGE = 2           # clip.vision.spatial_merge_size (ik's graph assumes 2)
N_EMBD = 48         # vision width (a multiple of 16: ik's AVX-512 LayerNorm/GELU paths do whole 16-lanes)
N_FF = 64           # a multiple of 16 (ik's AVX-512 GELU, no fp16-table tail)
N_HEAD = 2          # head dim 24 -> vision rope Qwen3VLVisionRotaryEmbedding(12): 6 frequencies per axis
N_LAYER = 2
N_PER_SIDE = 5      # learned position grid 5x5 = num_position_embeddings 25
IMAGE_SIZE = N_PER_SIDE * PATCH  # = int(sqrt(num_position_embeddings) * patch_size), as the converter computes it
EPS = 1e-6
TEXT_EMBD = 64      # out_hidden_size = qwen35-tiny's hidden size
SEED = 20261208
MERGED = N_EMBD * MERGE * MERGE  # 192


def make_weights():
    rng = np.random.default_rng(SEED)
    t = {}  # name -> (numpy array in numpy shape = ggml ne reversed, "f16"/"f32")

    def mat(name, n_out, n_in):
        t[name] = (rng.normal(0, 1 / np.sqrt(n_in), size=(n_out, n_in)).astype(np.float16), "f16")

    def vec(name, n, kind):
        v = rng.uniform(0.8, 1.2, size=n) if kind == "norm" else rng.normal(0, 0.05, size=n)
        t[name] = (v.astype(np.float32), "f32")

    fan_in = 2 * 3 * PATCH * PATCH  # two temporal frames summed
    for nm in ("v.patch_embd.weight", "v.patch_embd.weight.1"):
        # ggml ne [PATCH(kx), PATCH(ky), 3, N_EMBD] = numpy (N_EMBD, 3, ky, kx) = HF Conv3d weight[:, :, frame]
        t[nm] = (rng.normal(0, 1 / np.sqrt(fan_in), size=(N_EMBD, 3, PATCH, PATCH)).astype(np.float16), "f16")
    vec("v.patch_embd.bias", N_EMBD, "bias")
    # ggml ne [N_EMBD, 25], row r = grid cell (r // 5, r % 5) = (row y, col x)
    t["v.position_embd.weight"] = (rng.normal(0, 0.3, size=(N_PER_SIDE * N_PER_SIDE, N_EMBD)).astype(np.float32), "f32")
    for il in range(N_LAYER):
        p = f"v.blk.{il}."
        vec(p + "ln1.weight", N_EMBD, "norm")
        vec(p + "ln1.bias", N_EMBD, "bias")
        mat(p + "attn_qkv.weight", 3 * N_EMBD, N_EMBD)  # ggml ne [48, 144]: rows 0-47 q, 48-95 k, 96-143 v
        vec(p + "attn_qkv.bias", 3 * N_EMBD, "bias")
        mat(p + "attn_out.weight", N_EMBD, N_EMBD)
        vec(p + "attn_out.bias", N_EMBD, "bias")
        vec(p + "ln2.weight", N_EMBD, "norm")
        vec(p + "ln2.bias", N_EMBD, "bias")
        mat(p + "ffn_up.weight", N_FF, N_EMBD)      # ggml ne [48, 64]: 48 -> 64 (HF mlp.linear_fc1)
        vec(p + "ffn_up.bias", N_FF, "bias")
        mat(p + "ffn_down.weight", N_EMBD, N_FF)    # ggml ne [64, 48]: 64 -> 48 (HF mlp.linear_fc2)
        vec(p + "ffn_down.bias", N_EMBD, "bias")
    vec("v.post_ln.weight", N_EMBD, "norm")        # HF merger.norm: LayerNorm over width, BEFORE the 2x2 merge
    vec("v.post_ln.bias", N_EMBD, "bias")
    mat("mm.0.weight", MERGED, MERGED)              # HF merger.linear_fc1 (192 -> 192)
    vec("mm.0.bias", MERGED, "bias")
    mat("mm.2.weight", TEXT_EMBD, MERGED)           # HF merger.linear_fc2 (192 -> 64)
    vec("mm.2.bias", TEXT_EMBD, "bias")
    return t


def write_gguf(path):
    w = GGUFWriter(path, "clip")
    # raw key names (ik's gguf-py lacks some constants, e.g. is_deepstack_layers)
    w.add_string("general.type", "mmproj")
    w.add_string("general.name", "qwen35-tiny-mmproj")
    w.add_uint32("general.file_type", 1)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_uint32("clip.vision.projection_dim", TEXT_EMBD)
    w.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    w.add_uint32("clip.vision.patch_size", PATCH)
    w.add_uint32("clip.vision.embedding_length", N_EMBD)
    w.add_uint32("clip.vision.feed_forward_length", N_FF)
    w.add_uint32("clip.vision.block_count", N_LAYER)
    w.add_uint32("clip.vision.attention.head_count", N_HEAD)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    w.add_string("clip.projector_type", "qwen3vl_merger")
    w.add_bool("clip.use_gelu", True)
    w.add_uint32("clip.vision.spatial_merge_size", MERGE)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", EPS)
    w.add_array("clip.vision.is_deepstack_layers", [False] * N_LAYER)
    for name, (arr, kind) in make_weights().items():
        w.add_tensor(name, arr, raw_dtype=GGMLQuantizationType.F16 if kind == "f16" else GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    write_gguf(os.path.join(out, "qwen35-tiny-mmproj.gguf"))


if __name__ == "__main__":
    main()
