#!/usr/bin/env python3
"""Reference logits for the logits-parity fixtures, computed with plain PyTorch in float64.

    python3 bench/torch_reference.py test/fixtures/engine/parity [name ...]

For every model directory under the given root (a config.json plus model.safetensors, as written by
bench/make-parity-fixtures.ts with the project's saveModel), runs the token ids of <root>/inputs.json through an
independent implementation of the Hugging Face `transformers` forward pass and writes
<root>/<name>/reference-logits.json. test/runtime/engine/parity.test.ts compares the TypeScript engine against
those files.

Nothing here shares code with the TypeScript engine, and neither `transformers` nor `safetensors` is used: the
safetensors file is parsed by hand (8-byte little-endian header length, JSON header, raw data) and the models follow
the `transformers` definitions:

* GPT-2 (GPT2LMHeadModel): wte + wpe; pre-LN blocks; Conv1D weights stored [in, out] (y = x @ W + b); fused
  c_attn split into q, k, v; scores / sqrt(head_dim), causal mask; gelu_new (tanh form); ln_f; head tied to wte.
* Llama family (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM): nn.Linear weights stored [out, in]
  (y = x @ W^T + b); RMSNorm x * rsqrt(mean(x^2) + eps) * w; Qwen2 biases on q/k/v only; Qwen3 RMSNorm over
  head_dim on q and k before RoPE; RoPE in rotate_half form with inv_freq = 1 / theta^(arange(0, d, 2) / d),
  optionally rescaled ("linear", or "llama3" frequency bands as in _compute_llama3_parameters); grouped-query
  attention by repeating each kv head n_rep times (repeat_kv == repeat_interleave on the head axis); SwiGLU
  down(silu(gate(x)) * up(x)); final norm; lm_head, or the embedding when tie_word_embeddings.

Everything runs in float64 (weights widened from the file's F32), so the reference's own rounding error is far below
the 1e-4 tolerance the test applies to the float32 engine. `transformers` itself computes inv_freq and cos/sin in
float32; that difference is ~1e-7 relative and does not matter here.
"""

import hashlib
import json
import math
import os
import struct
import sys

try:
    import torch
except ImportError:  # pragma: no cover - environment fallback
    # pyenv's python3 may shadow Debian's, which is the one with python3-torch.
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and not os.environ.get("TORCH_REFERENCE_REEXEC"):
        os.environ["TORCH_REFERENCE_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("torch_reference.py: PyTorch is not importable from %s (Debian: apt-get install python3-torch)" % sys.executable)

DT = torch.float64
SIGNIFICANT_DIGITS = 9

SAFE_DTYPES = {
    "F64": (torch.float64, 8),
    "F32": (torch.float32, 4),
    "F16": (torch.float16, 2),
    "BF16": (torch.bfloat16, 2),
}


# ---------------------------------------------------------------------------------------------------------------
# safetensors, by hand

def read_safetensors(path):
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise ValueError("%s: shorter than the 8-byte header length" % path)
    (header_len,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + header_len].decode("utf-8"))
    data = buf[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, size = SAFE_DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        shape = info["shape"]
        count = 1
        for s in shape:
            count *= s
        if end - begin != count * size:
            raise ValueError("%s: tensor %s: %d bytes for %s%s" % (path, name, end - begin, info["dtype"], shape))
        chunk = bytearray(data[begin:end])  # frombuffer needs a writable buffer
        t = torch.frombuffer(chunk, dtype=dtype, count=count) if count else torch.empty(0, dtype=dtype)
        if sys.byteorder != "little":
            raise SystemExit("big-endian hosts are not supported")
        tensors[name] = t.reshape(shape).to(DT)
    return tensors


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# building blocks (transformers semantics)

def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased, as nn.LayerNorm
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    # LlamaRMSNorm / Qwen2RMSNorm / Qwen3RMSNorm: weight * (x * rsqrt(mean(x^2) + eps))
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def silu(x):
    return x * torch.sigmoid(x)


def conv1d(x, w, b):
    """GPT-2 Conv1D: weight [in, out]."""
    return x @ w + b


def linear(x, w, b=None):
    """nn.Linear: weight [out, in]."""
    y = x @ w.t()
    return y if b is None else y + b


def causal_softmax_attention(q, k, v):
    """q [B, H, T, d], k/v [B, H, T, d] -> [B, H, T, d]; scores scaled by 1/sqrt(d), keys after the query masked."""
    T = q.shape[-2]
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def split_heads(x, heads, head_dim):
    B, T, _ = x.shape
    return x.reshape(B, T, heads, head_dim)  # [B, T, H, d]; callers transpose(1, 2)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)


# ---------------------------------------------------------------------------------------------------------------
# GPT-2

def gpt2_logits(cfg, W, ids):
    D = cfg["n_embd"]
    H = cfg["n_head"]
    hd = D // H
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    act = {"gelu_new": gelu_new, "gelu": gelu_erf}[cfg.get("activation_function", "gelu_new")]

    def w(name):
        # GPT2Model files carry no "transformer." prefix.
        return W["transformer." + name] if "transformer." + name in W else W[name]

    B, T = ids.shape
    pos = torch.arange(T)
    x = w("wte.weight")[ids] + w("wpe.weight")[pos][None, :, :]
    for i in range(cfg["n_layer"]):
        p = "h.%d." % i
        a = layer_norm(x, w(p + "ln_1.weight"), w(p + "ln_1.bias"), eps)
        qkv = conv1d(a, w(p + "attn.c_attn.weight"), w(p + "attn.c_attn.bias"))
        q, k, v = qkv.split(D, dim=-1)
        q, k, v = (split_heads(t, H, hd).transpose(1, 2) for t in (q, k, v))
        ctx = merge_heads(causal_softmax_attention(q, k, v))
        x = x + conv1d(ctx, w(p + "attn.c_proj.weight"), w(p + "attn.c_proj.bias"))
        m = layer_norm(x, w(p + "ln_2.weight"), w(p + "ln_2.bias"), eps)
        m = act(conv1d(m, w(p + "mlp.c_fc.weight"), w(p + "mlp.c_fc.bias")))
        x = x + conv1d(m, w(p + "mlp.c_proj.weight"), w(p + "mlp.c_proj.bias"))
    x = layer_norm(x, w("ln_f.weight"), w("ln_f.bias"), eps)
    head = W["lm_head.weight"] if cfg.get("tie_word_embeddings", True) is False else w("wte.weight")
    return x @ head.t()


# ---------------------------------------------------------------------------------------------------------------
# Llama family

def rope_inv_freq(cfg, head_dim):
    theta = float(cfg.get("rope_theta", 10000.0))
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=DT) / head_dim))
    scaling = cfg.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return inv_freq
    if kind == "linear":
        return inv_freq / scaling["factor"]
    if kind == "llama3":
        factor = scaling["factor"]
        low_freq_factor = scaling.get("low_freq_factor", 1.0)
        high_freq_factor = scaling.get("high_freq_factor", 4.0)
        old_context_len = scaling.get("original_max_position_embeddings", 8192)
        low_freq_wavelen = old_context_len / low_freq_factor
        high_freq_wavelen = old_context_len / high_freq_factor
        wavelen = 2 * math.pi / inv_freq
        # long wavelengths (low frequencies) are divided by factor, short ones kept, the band between interpolated
        scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
        return torch.where(is_medium, smoothed, scaled)
    raise SystemExit("rope_scaling type %r is not implemented in the reference" % kind)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, cos, sin):
    return x * cos + rotate_half(x) * sin


def llama_logits(cfg, W, ids):
    model_type = cfg["model_type"]
    D = cfg["hidden_size"]
    H = cfg["num_attention_heads"]
    KV = cfg.get("num_key_value_heads") or H
    hd = cfg.get("head_dim") or D // H
    eps = cfg.get("rms_norm_eps", 1e-6)
    n_rep = H // KV
    if cfg.get("hidden_act", "silu") != "silu":
        raise SystemExit("hidden_act %r is not implemented in the reference" % cfg.get("hidden_act"))

    def opt(name):
        return W.get(name)

    B, T = ids.shape
    inv_freq = rope_inv_freq(cfg, hd)
    freqs = torch.arange(T, dtype=DT)[:, None] * inv_freq[None, :]  # [T, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)  # [T, d]
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]  # broadcast over [B, H, T, d]

    x = W["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        a = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = linear(a, W[p + "self_attn.q_proj.weight"], opt(p + "self_attn.q_proj.bias"))
        k = linear(a, W[p + "self_attn.k_proj.weight"], opt(p + "self_attn.k_proj.bias"))
        v = linear(a, W[p + "self_attn.v_proj.weight"], opt(p + "self_attn.v_proj.bias"))
        q, k, v = split_heads(q, H, hd), split_heads(k, KV, hd), split_heads(v, KV, hd)
        if model_type == "qwen3":
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # repeat_kv: query head h reads kv head h // n_rep
        k = k.repeat_interleave(n_rep, dim=1)
        v = v.repeat_interleave(n_rep, dim=1)
        ctx = merge_heads(causal_softmax_attention(q, k, v))
        x = x + linear(ctx, W[p + "self_attn.o_proj.weight"], opt(p + "self_attn.o_proj.bias"))
        m = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        m = silu(linear(m, W[p + "mlp.gate_proj.weight"])) * linear(m, W[p + "mlp.up_proj.weight"])
        x = x + linear(m, W[p + "mlp.down_proj.weight"])
    x = rms_norm(x, W["model.norm.weight"], eps)
    tied = cfg.get("tie_word_embeddings", False)
    head = W["model.embed_tokens.weight"] if tied else W["lm_head.weight"]
    return x @ head.t()


# ---------------------------------------------------------------------------------------------------------------

def round_sig(x):
    return float("%.*g" % (SIGNIFICANT_DIGITS, x))


def nested(t):
    if t.dim() == 0:
        return round_sig(t.item())
    return [nested(s) for s in t]


def reference(model_dir, input_ids):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    weights_path = os.path.join(model_dir, "model.safetensors")
    W = read_safetensors(weights_path)
    ids = torch.tensor(input_ids, dtype=torch.long)
    mt = cfg.get("model_type")
    if mt == "gpt2":
        logits = gpt2_logits(cfg, W, ids)
    elif mt in ("llama", "mistral", "qwen2", "qwen3"):
        logits = llama_logits(cfg, W, ids)
    else:
        raise SystemExit("%s: model_type %r is not implemented in the reference" % (model_dir, mt))
    return cfg, logits, sha256(weights_path)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    torch.set_grad_enabled(False)
    root = argv[1]
    only = set(argv[2:])
    with open(os.path.join(root, "inputs.json")) as f:
        input_ids = json.load(f)["input_ids"]
    names = sorted(n for n in os.listdir(root)
                   if os.path.isfile(os.path.join(root, n, "config.json")) and (not only or n in only))
    if not names:
        raise SystemExit("%s: no model directories (config.json + model.safetensors) found" % root)
    for name in names:
        model_dir = os.path.join(root, name)
        cfg, logits, digest = reference(model_dir, input_ids)
        out = {
            "generator": "bench/torch_reference.py",
            "torch_version": torch.__version__,
            "python_version": sys.version.split()[0],
            "dtype": "float64",
            "significant_digits": SIGNIFICANT_DIGITS,
            "model_type": cfg["model_type"],
            "model_safetensors_sha256": digest,
            "input_ids": input_ids,
            "shape": list(logits.shape),
            "logits": nested(logits),
        }
        path = os.path.join(model_dir, "reference-logits.json")
        with open(path, "w") as f:
            json.dump(out, f, separators=(",", ":"))
            f.write("\n")
        print("%s: logits %s, max |logit| %.4f -> %s" % (name, list(logits.shape), logits.abs().max().item(), path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
