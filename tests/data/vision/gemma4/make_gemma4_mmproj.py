#!/usr/bin/python3
"""Writes gemma4-tiny-mmproj.gguf: a tiny random-weight Gemma 4 vision projector (clip type "gemma4v"), the vision
tower + embedder of HF Gemma4ForConditionalGeneration (Gemma4VisionModel + Gemma4MultimodalEmbedder), and the one
extra test image strip.png (160x2 RGB, for HF's "one side rounds to 0" resize branch).

Usage (ik_llama.cpp's gguf-py on the path; see README.md):
  PYTHONPATH=<ik_llama.cpp>/gguf-py /usr/bin/python3 make_gemma4_mmproj.py [<out_dir>]

Keys and tensor names as llama.cpp's converter (conversion/gemma.py Gemma4VisionAudioModel + MmprojModel; ik's own
convert_hf_to_gguf.py has no Gemma 4 vision class) writes them for a Gemma 4 checkpoint without an audio tower:
  general.architecture "clip", general.type "mmproj", general.file_type 1 (F16),
  clip.has_vision_encoder true, clip.vision.projection_dim (= text hidden size),
  clip.vision.image_size 224 (the converter hard-codes it: "unused, but set to avoid error"), patch_size,
  embedding_length, feed_forward_length, block_count, attention.head_count, image_mean [0,0,0], image_std [1,1,1]
  (Gemma4ImageProcessor: do_normalize False; the model itself maps x -> 2x - 1),
  clip.vision.projector_type "gemma4v" (the per-modality key: add_clip_vision_projector_type; ik reads it when
  clip.projector_type is absent), clip.vision.attention.layer_norm_epsilon 1e-6 (hparams.get("layer_norm_eps",
  1e-6): Gemma 4's config calls it rms_norm_eps, so always the default).
  NOT written by the converter, so not here: clip.use_gelu (-> ik's clip uses GELU-quick in the blocks, HF uses
  gelu_pytorch_tanh: a documented ik/HF difference), clip.vision.projector.scale_factor (pooling_kernel_size; ik's
  default for gemma4v is 3 = HF's default), any rope theta (ik hard-codes 100 = HF's default).
HF -> GGUF names (converter: "model.vision_tower.encoder." -> "vision_model.model.", ".linear.weight" -> ".weight",
then gguf-py's tensor map; scalars [] -> [1]):
  model.vision_tower.patch_embedder.input_proj.weight (H, 3*P*P)   -> v.patch_embd.weight, reshaped (H, P, P, 3)
                                                                      and permuted to (H, 3, P, P) = ne [P, P, 3, H]
  model.vision_tower.patch_embedder.position_embedding_table (2, N, H) -> v.position_embd.weight, ne [H, N, 2], F32
  model.vision_tower.encoder.layers.L.input_layernorm             -> v.blk.L.ln1
  ...self_attn.{q,k,v,o}_proj.linear.weight                        -> v.blk.L.attn_{q,k,v,out}.weight
  ...self_attn.{q,k,v,o}_proj.{input,output}_{min,max}             -> v.blk.L.attn_{q,k,v,out}.{input,output}_{min,max}
  ...self_attn.q_norm / k_norm                                     -> v.blk.L.attn_q_norm / attn_k_norm  [head_dim]
  ...post_attention_layernorm                                      -> v.blk.L.attn_post_norm
  ...pre_feedforward_layernorm                                     -> v.blk.L.ln2
  ...mlp.{gate,up,down}_proj.linear.weight (+ clamp scalars)       -> v.blk.L.ffn_{gate,up,down}.weight (+ ...)
  ...post_feedforward_layernorm                                    -> v.blk.L.ffn_post_norm
  model.vision_tower.std_bias / std_scale                          -> v.std_bias / v.std_scale
  model.embed_vision.embedding_projection.weight (T, H)            -> mm.input_projection.weight, ne [H, T]
Norm weights are stored as HF holds them (Gemma4RMSNorm multiplies by the weight itself, no "1 +"; the converter
does not shift). No v.blk.L.out_scale (the Gemma 4 vision layers have no layer_scalar; ik would multiply by it).
Matrices F16, position table / norms / std / clamp scalars F32 (the converter's types for an F16 conversion).

Shape: hidden 32, 2 heads x 16, MLP 48 (gated), 2 blocks, patch 4, pooling 3 (default), position table 512 per
axis (HF position_embedding_size), out 64 = gemma4-tiny.gguf's hidden size. Weights: numpy PCG64 seed 20261209.
Clamp bounds (Gemma4ClippableLinear, use_clipped_linears = true as in the E2B/E4B/26B configs) are fixed numbers
chosen from a calibration run of hf_encoder_numpy.py over the test images so that each bound clips some activations
(the counts are in golden_hf.json); std_bias / std_scale as the standardize = true (26B/31B) models carry them.
"""
import os
import sys

import numpy as np
from gguf import GGUFWriter, GGMLQuantizationType

PATCH = 4
N_EMBD = 32         # vision hidden (a multiple of 16)
N_HEAD = 2          # head_dim 16: 2-D rope with 4 frequencies per axis
N_FF = 48           # a multiple of 16
N_LAYER = 2
N_POS = 512         # position_embedding_size (per axis); ik/HF index it by patch column / row
EPS = 1e-6
TEXT_EMBD = 64      # gemma4-tiny hidden size
IMAGE_SIZE = 224    # what the converter writes
SEED = 20261209

# Gemma4ClippableLinear bounds per (block, linear): (input_min, input_max, output_min, output_max)
CLAMPS = {
    0: {"attn_q": (-2.5, 2.375, -2.5, 2.625), "attn_k": (-2.625, 2.5, -2.625, 2.5),
        "attn_v": (-2.5, 2.625, -2.375, 2.5), "attn_out": (-1.375, 1.375, -1.375, 1.25),
        "ffn_gate": (-2.625, 2.625, -2.5, 2.375), "ffn_up": (-2.75, 2.5, -2.5, 2.5),
        "ffn_down": (-2.625, 2.75, -1.875, 2.0)},
    1: {"attn_q": (-2.375, 2.5, -2.375, 2.375), "attn_k": (-2.5, 2.375, -2.375, 2.375),
        "attn_v": (-2.5, 2.5, -2.625, 2.375), "attn_out": (-1.5, 1.375, -1.5, 1.5),
        "ffn_gate": (-2.5, 2.625, -2.5, 2.5), "ffn_up": (-2.625, 2.5, -2.625, 2.625),
        "ffn_down": (-2.625, 2.875, -2.0, 2.0)},
}


def make_weights():
    rng = np.random.default_rng(SEED)
    t = {}  # name -> (numpy array, shape = ggml ne reversed; "f16"/"f32")

    def mat(name, n_out, n_in):
        t[name] = (rng.normal(0, 1 / np.sqrt(n_in), size=(n_out, n_in)).astype(np.float16), "f16")

    def norm(name, n):
        t[name] = (rng.uniform(0.8, 1.2, size=n).astype(np.float32), "f32")

    # ggml ne [4, 4, 3, 32] = numpy (32, 3, ky, kx); HF input_proj[o, (ky*P + kx)*3 + c] = this[o, c, ky, kx]
    fan_in = 3 * PATCH * PATCH
    t["v.patch_embd.weight"] = (rng.normal(0, 1 / np.sqrt(fan_in), size=(N_EMBD, 3, PATCH, PATCH)).astype(np.float16), "f16")
    # ggml ne [32, 512, 2] = numpy (2, 512, 32): [0] = x (column) table, [1] = y (row) table
    t["v.position_embd.weight"] = (rng.normal(0, 0.5, size=(2, N_POS, N_EMBD)).astype(np.float32), "f32")
    d_head = N_EMBD // N_HEAD
    for il in range(N_LAYER):
        p = f"v.blk.{il}."
        norm(p + "ln1.weight", N_EMBD)
        mat(p + "attn_q.weight", N_EMBD, N_EMBD)
        mat(p + "attn_k.weight", N_EMBD, N_EMBD)
        mat(p + "attn_v.weight", N_EMBD, N_EMBD)
        mat(p + "attn_out.weight", N_EMBD, N_EMBD)
        norm(p + "attn_q_norm.weight", d_head)
        norm(p + "attn_k_norm.weight", d_head)
        norm(p + "attn_post_norm.weight", N_EMBD)
        norm(p + "ln2.weight", N_EMBD)
        mat(p + "ffn_gate.weight", N_FF, N_EMBD)   # ne [32, 48]
        mat(p + "ffn_up.weight", N_FF, N_EMBD)     # ne [32, 48]
        mat(p + "ffn_down.weight", N_EMBD, N_FF)   # ne [48, 32]
        norm(p + "ffn_post_norm.weight", N_EMBD)
        for lin, (imin, imax, omin, omax) in CLAMPS[il].items():
            for suf, v in (("input_min", imin), ("input_max", imax), ("output_min", omin), ("output_max", omax)):
                t[f"{p}{lin}.{suf}"] = (np.array([v], dtype=np.float32), "f32")
    t["v.std_bias"] = (rng.normal(0, 1.0, size=N_EMBD).astype(np.float32), "f32")
    t["v.std_scale"] = (rng.uniform(0.5, 1.5, size=N_EMBD).astype(np.float32), "f32")
    mat("mm.input_projection.weight", TEXT_EMBD, N_EMBD)  # ne [32, 64]: 32 -> 64
    return t


def write_gguf(path):
    w = GGUFWriter(path, "clip")
    w.add_string("general.type", "mmproj")
    w.add_string("general.name", "gemma4-tiny-mmproj")
    w.add_uint32("general.file_type", 1)
    w.add_bool("clip.has_vision_encoder", True)
    w.add_uint32("clip.vision.projection_dim", TEXT_EMBD)
    w.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    w.add_uint32("clip.vision.patch_size", PATCH)
    w.add_uint32("clip.vision.embedding_length", N_EMBD)
    w.add_uint32("clip.vision.feed_forward_length", N_FF)
    w.add_uint32("clip.vision.block_count", N_LAYER)
    w.add_uint32("clip.vision.attention.head_count", N_HEAD)
    w.add_array("clip.vision.image_mean", [0.0, 0.0, 0.0])
    w.add_array("clip.vision.image_std", [1.0, 1.0, 1.0])
    w.add_string("clip.vision.projector_type", "gemma4v")
    w.add_float32("clip.vision.attention.layer_norm_epsilon", EPS)
    for name, (arr, kind) in make_weights().items():
        w.add_tensor(name, arr, raw_dtype=GGMLQuantizationType.F16 if kind == "f16" else GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_strip(path):
    """160 x 2 RGB: two rows of a smooth colour ramp with a few hard steps (aspect 80 > 70: HF's target height
    rounds to 0 at max_soft_tokens 70 -> 12 px high, width capped at 70 * 12 = 840)."""
    from PIL import Image
    x = np.arange(160)
    a = np.zeros((2, 160, 3), dtype=np.uint8)
    a[0, :, 0] = (x * 255) // 159
    a[0, :, 1] = ((x // 20) % 2) * 200 + 30
    a[0, :, 2] = 255 - (x * 255) // 159
    a[1, :, 0] = ((x * 7) % 256)
    a[1, :, 1] = 128 + ((x // 10) % 4) * 30
    a[1, :, 2] = np.where(x < 80, 20, 230)
    Image.fromarray(a, "RGB").save(path, optimize=False)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    write_gguf(os.path.join(out, "gemma4-tiny-mmproj.gguf"))
    write_strip(os.path.join(out, "strip.png"))


if __name__ == "__main__":
    main()
