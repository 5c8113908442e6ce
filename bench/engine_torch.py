#!/usr/bin/env python3
"""PyTorch CPU peer for `npm run bench:engine` (bench/engine.bench.ts).

Loads the SAME Hugging Face model directory the engine saved (config.json + model.safetensors, parsed by hand: this
machine has Debian's python3-torch and no `transformers`), runs a plain-PyTorch Qwen2/Llama forward (RMSNorm, RoPE in
rotate-half form, q/k/v biases, SwiGLU, tied or untied head; eager attention with an additive causal + key-padding
mask, as Hugging Face's eager path does), and times exactly the work the engine is timed on:

* train: inputs ids[:, :-1], targets ids[:, 1:], loss = mean token NLL (log_softmax, gather), backward,
  clip_grad_norm_, torch.optim.AdamW (same lr, betas, eps, weight decay, clip) -> one step;
* gen: the batch of prompts prefilled once, then one token per step with a KV cache (per-layer torch.cat), sampled
  from the temperature-scaled distribution (torch.multinomial) with its log-probability: the same number of
  forwards as the engine's `generate` (prefill + new-1 decode steps);
* peak: median 512^3 and 1024^3 float32 matmul GFLOP/s of this torch build.

It is a server so that the bench can interleave its timings with the engine's (the machine is shared and noisy:
alternating puts both sides under the same background load). One JSON request per stdin line, one JSON reply
per stdout line; progress and errors go to stderr.
  {"op": "train", "threads": 2}  -> {"ms", "forward_ms", "backward_ms", "optimizer_ms", "loss"}
  {"op": "gen", "threads": 2}    -> {"ms", "tokens"}
  {"op": "peak", "threads": 2}   -> {"512": gflops, "1024": gflops}
  {"op": "rss"}                  -> {"max_rss_kb", "rss_kb"}: this process's peak RSS so far (getrusage ru_maxrss,
                                    KiB on Linux) and its current RSS (/proc/self/status VmRSS)
  {"op": "quit"}
usage: engine_torch.py MODEL_DIR INPUTS_JSON
INPUTS_JSON: {"train_ids": [[...]], "prompts": [[...]], "lr", "weight_decay", "clip", "betas", "eps", "new_tokens",
              "temperature", "seed"}
The first reply line is {"ready": true, "torch_version", "params", "blas", "blas_lib", "default_threads",
"startup_rss_kb"} (startup_rss_kb: peak RSS once torch is imported, before the model is loaded).
The bench starts one such process per model and peer, so each process's peak RSS covers one model.
"""
import json
import math
import os
import statistics
import struct
import sys
import time

import resource

import numpy as np
import torch
import torch.nn.functional as F


def max_rss_kb():
    """Peak resident set size of this process so far, KiB (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_kb():
    """Current resident set size, KiB (VmRSS); None where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


STARTUP_RSS_KB = max_rss_kb()

# BENCH_TORCH_DEVICE=cuda (bench/gpu-check.sh): every tensor on that device; timings synchronise it first.
DEVICE = os.environ.get("BENCH_TORCH_DEVICE", "cpu")
if DEVICE != "cpu":
    torch.set_default_device(DEVICE)  # torch >= 2.0
sync = torch.cuda.synchronize if DEVICE.startswith("cuda") else (lambda: None)


def read_safetensors(path):
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8 : 8 + n].decode("utf-8"))
    base = 8 + n
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dt = info["dtype"]
        if dt == "BF16":
            raw = np.frombuffer(buf, dtype=np.uint16, count=(e - b) // 2, offset=base + b).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            np_dt = dtypes[dt]
            arr = np.frombuffer(buf, dtype=np_dt, count=(e - b) // np.dtype(np_dt).itemsize, offset=base + b).astype(np.float32)
        out[name] = torch.from_numpy(arr.copy()).reshape(info["shape"]).to(DEVICE)
    return out


class Qwen2:
    """Functional Qwen2/Llama decoder on plain tensors (weights keyed by HF names, nn.Linear layout [out, in])."""

    def __init__(self, cfg, tensors):
        self.cfg = cfg
        self.D = cfg["hidden_size"]
        self.L = cfg["num_hidden_layers"]
        self.H = cfg["num_attention_heads"]
        self.KV = cfg.get("num_key_value_heads", self.H)
        self.hd = cfg.get("head_dim") or self.D // self.H
        self.eps = cfg.get("rms_norm_eps", 1e-6)
        self.V = cfg["vocab_size"]
        self.params = {k: v.clone().requires_grad_(True) for k, v in tensors.items() if not k.endswith("rotary_emb.inv_freq")}
        self.tied = cfg.get("tie_word_embeddings", False) or "lm_head.weight" not in self.params
        if self.tied:
            self.params.pop("lm_head.weight", None)
        theta = cfg.get("rope_theta", 10000.0)
        inv = 1.0 / (theta ** (torch.arange(0, self.hd, 2, dtype=torch.float64) / self.hd))
        pos = torch.arange(cfg.get("max_position_embeddings", 4096), dtype=torch.float64)
        freqs = torch.outer(pos, inv)
        emb = torch.cat([freqs, freqs], dim=-1)
        self.cos = emb.cos().float()
        self.sin = emb.sin().float()

    def p(self, name):
        return self.params[name]

    def head(self):
        return self.p("model.embed_tokens.weight") if self.tied else self.p("lm_head.weight")

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * w

    @staticmethod
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat([-x[..., h:], x[..., :h]], dim=-1)

    def forward(self, ids, positions, key_mask=None, cache=None):
        """ids [B, T], positions [B, T], key_mask [B, past+T] (1 real, 0 pad) -> hidden [B, T, D], new cache."""
        B, T = ids.shape
        past = 0 if cache is None else cache[0][0].shape[2]
        x = F.embedding(ids, self.p("model.embed_tokens.weight"))
        cos = self.cos[positions].unsqueeze(1)  # [B, 1, T, hd]
        sin = self.sin[positions].unsqueeze(1)
        Tk = past + T
        bias = torch.full((T, Tk), -1e9).triu(past + 1).view(1, 1, T, Tk)
        if key_mask is not None:
            bias = bias + ((1.0 - key_mask.float()) * -1e9).view(B, 1, 1, Tk)
        new_cache = []
        for i in range(self.L):
            pre = f"model.layers.{i}"
            h = self.rms(x, self.p(f"{pre}.input_layernorm.weight"))
            q = F.linear(h, self.p(f"{pre}.self_attn.q_proj.weight"), self.params.get(f"{pre}.self_attn.q_proj.bias"))
            k = F.linear(h, self.p(f"{pre}.self_attn.k_proj.weight"), self.params.get(f"{pre}.self_attn.k_proj.bias"))
            v = F.linear(h, self.p(f"{pre}.self_attn.v_proj.weight"), self.params.get(f"{pre}.self_attn.v_proj.bias"))
            q = q.view(B, T, self.H, self.hd).transpose(1, 2)
            k = k.view(B, T, self.KV, self.hd).transpose(1, 2)
            v = v.view(B, T, self.KV, self.hd).transpose(1, 2)
            q = q * cos + self.rotate_half(q) * sin
            k = k * cos + self.rotate_half(k) * sin
            if cache is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            new_cache.append((k, v))
            if self.KV != self.H:
                k = k.repeat_interleave(self.H // self.KV, dim=1)
                v = v.repeat_interleave(self.H // self.KV, dim=1)
            scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd) + bias
            probs = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, self.H * self.hd)
            x = x + F.linear(ctx, self.p(f"{pre}.self_attn.o_proj.weight"))
            h = self.rms(x, self.p(f"{pre}.post_attention_layernorm.weight"))
            gate = F.linear(h, self.p(f"{pre}.mlp.gate_proj.weight"))
            up = F.linear(h, self.p(f"{pre}.mlp.up_proj.weight"))
            x = x + F.linear(F.silu(gate) * up, self.p(f"{pre}.mlp.down_proj.weight"))
        return self.rms(x, self.p("model.norm.weight")), new_cache


def median(xs):
    return statistics.median(xs)


def matmul_gflops(n, reps):
    a = torch.randn(n, n)
    b = torch.randn(n, n)
    for _ in range(2):
        a @ b
    ts = []
    for _ in range(reps):
        t = (sync(), time.perf_counter())[1]
        a @ b
        ts.append((sync(), time.perf_counter())[1] - t)
    return 2 * n**3 / median(ts) / 1e9




class Bench:
    def __init__(self, model_dir, inputs_path):
        with open(f"{model_dir}/config.json") as f:
            cfg = json.load(f)
        with open(inputs_path) as f:
            inp = json.load(f)
        self.inp = inp
        torch.manual_seed(inp.get("seed", 0))
        self.model = Qwen2(cfg, read_safetensors(f"{model_dir}/model.safetensors"))
        self.params = list(self.model.params.values())
        ids = torch.tensor(inp["train_ids"], dtype=torch.long)
        self.B, T1 = ids.shape
        self.T = T1 - 1
        self.inputs, self.targets = ids[:, :-1], ids[:, 1:]
        self.positions = torch.arange(self.T).unsqueeze(0).expand(self.B, self.T)
        self.opt = torch.optim.AdamW(self.params, lr=inp["lr"], betas=tuple(inp["betas"]), eps=inp["eps"], weight_decay=inp["weight_decay"])
        self.prompts = torch.tensor(inp["prompts"], dtype=torch.long)
        self.gen = torch.Generator(device=DEVICE).manual_seed(inp.get("seed", 0))

    def logits(self, hidden, head):
        return hidden @ head.t() if self.model.tied else F.linear(hidden, head)

    def train_step(self):
        m = self.model
        t0 = (sync(), time.perf_counter())[1]
        self.opt.zero_grad(set_to_none=True)
        hidden, _ = m.forward(self.inputs, self.positions)
        logp = torch.log_softmax(self.logits(hidden, m.head()), dim=-1)
        loss = -logp.gather(-1, self.targets.unsqueeze(-1)).squeeze(-1).mean()
        lv = loss.item()
        t1 = (sync(), time.perf_counter())[1]
        loss.backward()
        t2 = (sync(), time.perf_counter())[1]
        if self.inp["clip"] > 0:
            torch.nn.utils.clip_grad_norm_(self.params, self.inp["clip"])
        self.opt.step()
        t3 = (sync(), time.perf_counter())[1]
        return {"ms": (t3 - t0) * 1e3, "forward_ms": (t1 - t0) * 1e3, "backward_ms": (t2 - t1) * 1e3, "optimizer_ms": (t3 - t2) * 1e3, "loss": lv}

    def generate(self):
        m = self.model
        GB, P = self.prompts.shape
        new = self.inp["new_tokens"]
        temp = self.inp["temperature"]
        t0 = (sync(), time.perf_counter())[1]
        with torch.inference_mode():
            head = m.head().detach()
            key_mask = torch.ones(GB, P)
            pos = torch.arange(P).unsqueeze(0).expand(GB, P)
            hidden, cache = m.forward(self.prompts, pos, key_mask)
            out = []
            next_pos = torch.full((GB, 1), P, dtype=torch.long)
            for t in range(new):
                z = self.logits(hidden[:, -1], head)
                if temp > 0:
                    z = z / temp
                logp = torch.log_softmax(z, dim=-1)
                tok = torch.multinomial(logp.exp(), 1, generator=self.gen) if temp > 0 else logp.argmax(-1, keepdim=True)
                logp.gather(-1, tok)
                out.append(tok)
                if t == new - 1:
                    break
                key_mask = torch.cat([key_mask, torch.ones(GB, 1)], dim=1)
                hidden, cache = m.forward(tok, next_pos, key_mask, cache)
                next_pos = next_pos + 1
            toks = torch.cat(out, dim=1)
        return {"ms": ((sync(), time.perf_counter())[1] - t0) * 1e3, "tokens": int(toks.numel())}


def main():
    model_dir, inputs_path = sys.argv[1:3]
    bench = Bench(model_dir, inputs_path)
    default_threads = torch.get_num_threads()
    blas = next((l.split("BLAS_INFO=")[1].split(",")[0] for l in torch.__config__.show().splitlines() if "BLAS_INFO=" in l), "unknown")
    # The BLAS library actually loaded (Debian's torch links libblas.so.3, whichever implementation that resolves to).
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "blas" in l.lower() and "/" in l})
    blas_lib = ", ".join(libs) or "unknown"
    reply = lambda obj: print(json.dumps(obj), flush=True)
    reply({"ready": True, "torch_version": torch.__version__, "params": sum(t.numel() for t in bench.params), "blas": blas, "blas_lib": blas_lib, "device": DEVICE, "default_threads": default_threads, "startup_rss_kb": STARTUP_RSS_KB})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if "threads" in req:
            torch.set_num_threads(int(req["threads"]))
        if op == "train":
            reply(bench.train_step())
        elif op == "gen":
            reply(bench.generate())
        elif op == "peak":
            reply({str(n): matmul_gflops(n, r) for n, r in ((512, 15), (1024, 7))})
        elif op == "rss":
            reply({"max_rss_kb": max_rss_kb(), "rss_kb": rss_kb()})
        elif op == "quit":
            break
        else:
            reply({"error": f"unknown op {op!r}"})


if __name__ == "__main__":
    main()
