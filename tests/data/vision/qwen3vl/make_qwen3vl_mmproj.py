#!/usr/bin/python3
"""Writes qwen3vl-tiny-mmproj.gguf (a tiny random-weight Qwen3-VL vision projector) and the test images.

Usage (ik_llama.cpp's gguf-py on the path; see README.md):
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_qwen3vl_mmproj.py <out_dir> [<hf_dir>]

Writes into <out_dir>: qwen3vl-tiny-mmproj.gguf and the six images; into <hf_dir> (default <out_dir>; scratch):
hf_preproc.f32 + hf_preproc.json (transformers' slow Qwen2VLImageProcessor preprocessing of every image, re-done
here with PIL + numpy for factor 8, min_pixels 512, max_pixels 4096; ik_qwen3vl reads them and stores them and
their embeddings in golden.f32).

Keys and tensor names as llama.cpp's convert_hf_to_gguf.py (Qwen3VLVisionModel + MmprojModel) writes them
for a Qwen3-VL checkpoint (ik_llama.cpp's own converter has no Qwen3-VL class: its PR #883 says "use
llama.cpp to convert"), and as ik's examples/mtmd/clip.cpp reads them for projector "qwen3vl_merger".
HF -> GGUF name map of that converter (for reference):
  visual.patch_embed.proj.weight (Conv3d, kt=2) -> v.patch_embd.weight (frame 0), v.patch_embd.weight.1 (frame 1)
  visual.patch_embed.proj.bias                  -> v.patch_embd.bias
  visual.pos_embed.weight (num_pos, width)      -> v.position_embd.weight
  visual.blocks.N.norm1 / norm2                 -> v.blk.N.ln1 / ln2
  visual.blocks.N.attn.qkv / attn.proj          -> v.blk.N.attn_qkv / attn_out
  visual.blocks.N.mlp.linear_fc1 / linear_fc2   -> v.blk.N.ffn_up / ffn_down
  visual.merger.norm / linear_fc1 / linear_fc2  -> v.post_ln / mm.0 / mm.2
  visual.deepstack_merger_list.K.{norm,linear_fc1,linear_fc2} -> v.deepstack.<deepstack_visual_indexes[K]>.{norm,fc1,fc2}
The pairing with ../shared/models/arch/qwen3-tiny.gguf (renamed to qwen3vl, make_qwen3vl_text.py): projection
-> 64 = the text model's hidden size.
"""
import hashlib
import json
import math
import os
import sys

import numpy as np
from PIL import Image
from gguf import GGUFWriter, GGMLQuantizationType

PATCH = 4
MERGE = 2           # clip.vision.spatial_merge_size
N_EMBD = 32         # vision width
N_FF = 48           # a multiple of 16 (ik's AVX-512 GELU does whole 16-lanes, no fp16-table tail)
N_HEAD = 2          # head dim 16
N_LAYER = 3
DEEPSTACK = [0, 1]  # deepstack_visual_indexes
N_PER_SIDE = 6      # learned position grid 6x6 = num_position_embeddings 36
IMAGE_SIZE = N_PER_SIDE * PATCH  # = int(sqrt(num_position_embeddings) * patch_size), as the converter computes it
EPS = 1e-6
TEXT_EMBD = 64      # out_hidden_size = text hidden size
SEED = 20261207
MERGED = N_EMBD * MERGE * MERGE  # 128


def make_weights():
    rng = np.random.default_rng(SEED)
    t = {}  # name -> (numpy array, numpy shape = ggml ne reversed, "f16"/"f32")

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
    # ggml ne [N_EMBD, 36], row r = grid cell (r // 6, r % 6) = (row, col)
    t["v.position_embd.weight"] = (rng.normal(0, 0.3, size=(N_PER_SIDE * N_PER_SIDE, N_EMBD)).astype(np.float32), "f32")
    for il in range(N_LAYER):
        p = f"v.blk.{il}."
        vec(p + "ln1.weight", N_EMBD, "norm")
        vec(p + "ln1.bias", N_EMBD, "bias")
        mat(p + "attn_qkv.weight", 3 * N_EMBD, N_EMBD)  # ggml ne [32, 96]: rows 0-31 q, 32-63 k, 64-95 v
        vec(p + "attn_qkv.bias", 3 * N_EMBD, "bias")
        mat(p + "attn_out.weight", N_EMBD, N_EMBD)
        vec(p + "attn_out.bias", N_EMBD, "bias")
        vec(p + "ln2.weight", N_EMBD, "norm")
        vec(p + "ln2.bias", N_EMBD, "bias")
        mat(p + "ffn_up.weight", N_FF, N_EMBD)      # ggml ne [32, 48]: 32 -> 48 (HF mlp.linear_fc1)
        vec(p + "ffn_up.bias", N_FF, "bias")
        mat(p + "ffn_down.weight", N_EMBD, N_FF)    # ggml ne [48, 32]: 48 -> 32 (HF mlp.linear_fc2)
        vec(p + "ffn_down.bias", N_EMBD, "bias")
    for il in DEEPSTACK:
        p = f"v.deepstack.{il}."
        vec(p + "norm.weight", MERGED, "norm")     # LayerNorm over 4*width (use_postshuffle_norm=True)
        vec(p + "norm.bias", MERGED, "bias")
        mat(p + "fc1.weight", MERGED, MERGED)
        vec(p + "fc1.bias", MERGED, "bias")
        mat(p + "fc2.weight", TEXT_EMBD, MERGED)
        vec(p + "fc2.bias", TEXT_EMBD, "bias")
    vec("v.post_ln.weight", N_EMBD, "norm")        # HF merger.norm: LayerNorm over width, BEFORE the 2x2 merge
    vec("v.post_ln.bias", N_EMBD, "bias")
    mat("mm.0.weight", MERGED, MERGED)              # HF merger.linear_fc1
    vec("mm.0.bias", MERGED, "bias")
    mat("mm.2.weight", TEXT_EMBD, MERGED)           # HF merger.linear_fc2
    vec("mm.2.bias", TEXT_EMBD, "bias")
    return t


def write_gguf(path):
    w = GGUFWriter(path, "clip")
    # raw key names (ik's gguf-py lacks some constants, e.g. is_deepstack_layers)
    w.add_string("general.type", "mmproj")
    w.add_string("general.name", "qwen3vl-tiny-mmproj")
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
    w.add_array("clip.vision.is_deepstack_layers", [i in DEEPSTACK for i in range(N_LAYER)])
    for name, (arr, kind) in make_weights().items():
        w.add_tensor(name, arr, raw_dtype=GGMLQuantizationType.F16 if kind == "f16" else GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def pattern(w, h, c=3, seed=0):
    y, x = np.mgrid[0:h, 0:w]
    r = (x * 255 // max(w - 1, 1))
    g = (y * 255 // max(h - 1, 1))
    b = ((x * 7 + y * 13 + seed * 29) * 37) % 256
    chans = [r, g, b]
    if c == 4:
        chans.append((((x // 3) + (y // 3)) % 4) * 85)  # alpha 0, 85, 170, 255
    return np.stack(chans, axis=-1).astype(np.uint8)


# name, (w, h), what ik's smart resize does with image_min_tokens 8 / image_max_tokens 64 (README)
IMAGES = [
    ("grid.png", (32, 24)),   # on the 8-px grid, 768 px: no resize (patch grid 8x6: pos-embd 6x6 -> 8x6)
    ("wide.png", (52, 19)),   # round: 56x16 (w up, h down)
    ("tall.jpg", (20, 50)),   # round: 24x48 (JPEG q90)
    ("small.png", (12, 14)),  # 16x16 = 256 < min 512 -> ceil rule: 24x32 (upscale)
    ("big.png", (90, 60)),    # 88x56 = 4928 > max 4096 -> floor rule: 72x48 (downscale)
    ("rgba.png", (24, 24)),   # RGBA, on grid: no resize, patch grid 6x6 = pos grid (no interpolation)
]


def make_images(out):
    g = pattern(32, 24)
    g[4:12, 8:24] = [250, 30, 60]
    g[14:22, 2:10] = [20, 200, 220]
    Image.fromarray(g, "RGB").save(os.path.join(out, "grid.png"))
    Image.fromarray(pattern(52, 19, seed=1), "RGB").save(os.path.join(out, "wide.png"))
    Image.fromarray(pattern(20, 50, seed=2), "RGB").save(os.path.join(out, "tall.jpg"), quality=90)
    Image.fromarray(pattern(12, 14, seed=3), "RGB").save(os.path.join(out, "small.png"))
    b = pattern(90, 60, seed=4)
    b[10:30, 20:50] = [240, 240, 30]
    Image.fromarray(b, "RGB").save(os.path.join(out, "big.png"))
    Image.fromarray(pattern(24, 24, 4, seed=5), "RGBA").save(os.path.join(out, "rgba.png"))


FACTOR = PATCH * MERGE        # 8
MIN_PIXELS = 8 * FACTOR ** 2  # image_min_tokens 8 (ik's default for Qwen-VL) -> 512
MAX_PIXELS = 64 * FACTOR ** 2  # image_max_tokens 64 (the golden's custom value) -> 4096


def hf_smart_resize(height, width):
    """transformers models/qwen2_vl/image_processing_qwen2_vl.py smart_resize (Python round = half to even)."""
    h_bar = round(height / FACTOR) * FACTOR
    w_bar = round(width / FACTOR) * FACTOR
    if h_bar * w_bar > MAX_PIXELS:
        beta = math.sqrt((height * width) / MAX_PIXELS)
        h_bar = max(FACTOR, math.floor(height / beta / FACTOR) * FACTOR)
        w_bar = max(FACTOR, math.floor(width / beta / FACTOR) * FACTOR)
    elif h_bar * w_bar < MIN_PIXELS:
        beta = math.sqrt(MIN_PIXELS / (height * width))
        h_bar = math.ceil(height * beta / FACTOR) * FACTOR
        w_bar = math.ceil(width * beta / FACTOR) * FACTOR
    return h_bar, w_bar


def hf_preprocess(out, hf_dir):
    """transformers Qwen2VLImageProcessor (slow, PIL) as Qwen3-VL's preprocessor_config sets it up, shrunk to this
    projector: convert_rgb (alpha dropped), smart_resize (factor 8, min 512, max 4096 pixels), resize with PIL
    BICUBIC (always called, also when the size is unchanged), rescale 1/255 (float64 -> float32), normalize
    (x - 0.5) / 0.5 in float32. Layout: HWC interleaved RGB, row-major (as clip_image_f32 stores it)."""
    meta, blobs = [], []
    for name, _ in IMAGES:
        im = Image.open(os.path.join(out, name))
        mode = im.mode
        rgb = im.convert("RGB")
        h, w = hf_smart_resize(rgb.height, rgb.width)
        res = rgb.resize((w, h), resample=Image.BICUBIC)
        a = (np.asarray(res).astype(np.float64) * (1 / 255)).astype(np.float32)
        a = ((a - np.float32(0.5)) / np.float32(0.5)).astype(np.float32)
        meta.append({"image": name, "pil_mode": mode, "pil_rgb_sha256": hashlib.sha256(rgb.tobytes()).hexdigest(),
                     "nx": w, "ny": h, "offset": int(sum(b.size for b in blobs))})
        blobs.append(a.reshape(-1))
    np.concatenate(blobs).astype("<f4").tofile(os.path.join(hf_dir, "hf_preproc.f32"))
    with open(os.path.join(hf_dir, "hf_preproc.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    hf_dir = sys.argv[2] if len(sys.argv) > 2 else out
    os.makedirs(out, exist_ok=True)
    os.makedirs(hf_dir, exist_ok=True)
    write_gguf(os.path.join(out, "qwen3vl-tiny-mmproj.gguf"))
    make_images(out)
    hf_preprocess(out, hf_dir)


if __name__ == "__main__":
    main()
