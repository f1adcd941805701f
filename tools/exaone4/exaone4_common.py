"""Shared pieces of the EXAONE 4 tiny-model tools (make_exaone4_tiny.py, exaone4_numpy_ref.py).

Written for this project; nothing here is copied from transformers or llama.cpp. What it mirrors is
described where it does so:
  * bf16 / f16 rounding of random weights,
  * a minimal safetensors writer/reader (BF16 only),
  * the GPT-2 byte-level BPE vocabulary: byte<->unicode table, pre-tokenizer split, merge training
    on a small built-in corpus, encoder and piece decoder,
  * importing llama.cpp's gguf-py without its optional sentencepiece dependency.
"""
from __future__ import annotations

import json
import os
import struct
import sys
import types
import unicodedata
from pathlib import Path

import numpy as np

# ----------------------------------------------------------------------------------------------
# gguf-py (llama.cpp's Python GGUF package). Default: the b4747 checkout next to this workplace;
# GGUF_PY overrides. Its vocab.py imports sentencepiece at module load; these tools never use
# SentencePiece, so a stand-in module is registered when the real one is missing.
# ----------------------------------------------------------------------------------------------
DEFAULT_GGUF_PY = "/work/llama.cpp-b4747/gguf-py"


def import_gguf():
    path = os.environ.get("GGUF_PY", DEFAULT_GGUF_PY)
    if path not in sys.path:
        sys.path.insert(0, path)
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        stub = types.ModuleType("sentencepiece")
        stub.SentencePieceProcessor = None
        sys.modules["sentencepiece"] = stub
    import gguf  # noqa: E402

    return gguf


# ----------------------------------------------------------------------------------------------
# Rounding
# ----------------------------------------------------------------------------------------------
def bf16_bits(x) -> np.ndarray:
    """float -> bf16 bit patterns, round to nearest even (as torch's .to(bfloat16))."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = u + 0x7FFF + ((u >> 16) & 1)
    return (u >> 16).astype(np.uint16)


def bf16_from_bits(b) -> np.ndarray:
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_round(x) -> np.ndarray:
    return bf16_from_bits(bf16_bits(x))


def bf16_f16_round(x) -> np.ndarray:
    """A value exact in both bf16 and f16 (bf16, then f16, then bf16 again: see README)."""
    y = bf16_round(bf16_round(x).astype(np.float16).astype(np.float32))
    assert np.array_equal(bf16_round(y), y) and np.array_equal(y.astype(np.float16).astype(np.float32), y)
    return y


# ----------------------------------------------------------------------------------------------
# safetensors (BF16 only), written by hand: u64 LE header length, JSON header (with
# __metadata__ {format: pt}) space-padded to a multiple of 8, tensors in name order, raw LE data.
# ----------------------------------------------------------------------------------------------
def write_safetensors_bf16(path: Path, tensors: dict[str, np.ndarray]) -> None:
    names = sorted(tensors)
    header: dict = {"__metadata__": {"format": "pt"}}
    blobs = []
    off = 0
    for n in names:
        a = np.asarray(tensors[n], dtype=np.float32)
        bits = bf16_bits(a)
        assert np.array_equal(bf16_from_bits(bits), a), f"{n} is not bf16-exact"
        raw = bits.astype("<u2").tobytes()
        header[n] = {"dtype": "BF16", "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((-len(hj)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = data[base + b : base + e]
        if info["dtype"] == "BF16":
            a = bf16_from_bits(np.frombuffer(raw, dtype="<u2"))
        elif info["dtype"] == "F32":
            a = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif info["dtype"] == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            raise ValueError(f"{name}: dtype {info['dtype']} not handled")
        out[name] = a.reshape(info["shape"])
    return out


# ----------------------------------------------------------------------------------------------
# GPT-2 byte-level BPE
# ----------------------------------------------------------------------------------------------
def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table: the printable Latin-1 bytes
    ('!'..'~', '¡'..'¬', '®'..'ÿ') map to themselves, the other 68 bytes to U+0100.. in byte order."""
    keep = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    table = {b: chr(b) for b in keep}
    nxt = 256
    for b in range(256):
        if b not in table:
            table[b] = chr(nxt)
            nxt += 1
    return table


B2U = byte_to_unicode()
U2B = {c: b for b, c in B2U.items()}


def _cls(c: str) -> str:
    """'L' letter, 'N' number, 'S' whitespace, 'O' other (the classes of the GPT-2 regex)."""
    if c.isspace():
        return "S"
    cat = unicodedata.category(c)
    if cat[0] == "L":
        return "L"
    if cat[0] == "N":
        return "N"
    return "O"


_CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")


def gpt2_split(text: str) -> list[str]:
    """The GPT-2 pre-tokenizer, i.e. the regex
         's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
    scanned by hand (llama.cpp's pre type GPT2, which its vocab loader uses for pre 'exaone4')."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "'":
            hit = next((s for s in _CONTRACTIONS if text.startswith(s, i)), None)
            if hit:
                out.append(hit)
                i += len(hit)
                continue
        if c == " " and i + 1 < n and _cls(text[i + 1]) != "S":
            start, i = i, i + 1  # ' ?X+': the space belongs to the run after it
        else:
            start = i
        k = _cls(text[i])
        if k != "S":
            j = i + 1
            while j < n and _cls(text[j]) == k:
                j += 1
            out.append(text[start:j])
            i = j
            continue
        j = i
        while j < n and _cls(text[j]) == "S":
            j += 1
        if j == n:
            out.append(text[i:j])  # trailing whitespace
            i = j
        elif j - i >= 2:
            out.append(text[i : j - 1])  # \s+(?!\S): the last one is left for the next match
            i = j - 1
        else:
            out.append(text[i])  # one non-' ' whitespace before a non-space: \s+
            i += 1
    return out


def to_byte_chars(s: str) -> str:
    return "".join(B2U[b] for b in s.encode("utf-8"))


def train_merges(corpus: list[str], n_merges: int) -> list[tuple[str, str]]:
    """Plain BPE training over the GPT-2 pre-tokens of `corpus`: repeatedly merge the most frequent
    adjacent pair (ties: the lexicographically smallest pair), never creating a string twice."""
    freq: dict[tuple[str, ...], int] = {}
    for line in corpus:
        for w in gpt2_split(line):
            t = tuple(to_byte_chars(w))
            freq[t] = freq.get(t, 0) + 1
    words = list(freq.items())
    made = set(B2U.values())
    merges = []
    while len(merges) < n_merges:
        counts: dict[tuple[str, str], int] = {}
        for w, f in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + f
        cands = sorted(((-c, p) for p, c in counts.items() if p[0] + p[1] not in made))
        if not cands:
            raise RuntimeError("corpus too small for the requested merges")
        a, b = cands[0][1]
        merges.append((a, b))
        made.add(a + b)
        new_words = []
        for w, f in words:
            nw = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    nw.append(a + b)
                    i += 2
                else:
                    nw.append(w[i])
                    i += 1
            new_words.append((tuple(nw), f))
        words = new_words
    return merges


def bpe_encode(text: str, vocab: dict[str, int], ranks: dict[tuple[str, str], int]) -> list[int]:
    """Encode plain text (no special-token parsing): GPT-2 split, byte chars, then repeatedly apply
    the lowest-rank merge (left-most first) until none applies."""
    ids = []
    for w in gpt2_split(text):
        sym = list(to_byte_chars(w))
        while len(sym) > 1:
            best = None
            for i in range(len(sym) - 1):
                r = ranks.get((sym[i], sym[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            sym[i : i + 2] = [sym[i] + sym[i + 1]]
        ids.extend(vocab[s] for s in sym)
    return ids


def piece_bytes(token: str, token_type: int) -> bytes:
    """llama_token_to_piece(special=true) for a BPE vocab: NORMAL tokens are byte-decoded,
    CONTROL and USER_DEFINED tokens are their text as is."""
    if token_type == 1:
        return bytes(U2B[c] for c in token)
    return token.encode("utf-8")
