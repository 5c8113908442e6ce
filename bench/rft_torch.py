#!/usr/bin/env python3
"""PyTorch CPU peer for `npm run bench:rft`: one GRPO iteration on the same model, batch and loss as the runtime.

Loads the model directory the bench created (plain-PyTorch Qwen2 from engine_torch.py), then per iteration:
sample G completions for each of P prompts with a KV cache (temperature 1, keeping each token's log-probability),
score them (a fixed pseudo-random 0/1 reward per completion: reward cost is negligible on both sides), compute
GRPO group advantages ((r - mean) / (unbiased std + 1e-6)), and take one PPO-clip step (clip 0.2, token-mean over
response tokens) plus Trinity's grpo default KL loss (kl_loss_fn k2 = 0.5 (logp - ref_logp)^2, token-mean, kl_coef
0.001, with ref_logp from a no-grad forward of a frozen copy of the initial weights, as the runtime's trainer does),
with AdamW and grad clipping 1.0.
usage: rft_torch.py MODEL_DIR INPUTS_JSON   (INPUTS_JSON: {"prompts": [[...]], "group": G, "new_tokens": N,
        "iterations": K, "lr": ..., "threads": 2}); prints one JSON line {"iteration_ms": [...], "cpu_ms": [...],
        "phase_ms": {phase: [...]}, "phase_cpu_ms": {...}, "torch_version", "blas_lib"} (cpu_ms: the process's CPU
        time per timed iteration; phase_ms, phase_cpu_ms: each timed iteration's wall and CPU milliseconds per phase,
        bench:rft's per-phase tables; blas_lib: the BLAS libraries this process mapped, as bench/engine_torch.py
        reports them).
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from engine_torch import Qwen2, read_safetensors  # noqa: E402


def main():
    model_dir, inputs_path = sys.argv[1], sys.argv[2]
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    with open(inputs_path) as f:
        inp = json.load(f)
    torch.set_num_threads(inp.get("threads", 2))
    torch.manual_seed(0)
    weights = read_safetensors(f"{model_dir}/model.safetensors")
    m = Qwen2(cfg, weights)
    ref = Qwen2(cfg, weights)  # Qwen2 clones its tensors: a frozen copy of the initial weights
    kl_coef = inp.get("kl_coef", 0.001)
    params = list(m.params.values())
    opt = torch.optim.AdamW(params, lr=inp["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    prompts = torch.tensor(inp["prompts"], dtype=torch.long)
    G, N = inp["group"], inp["new_tokens"]
    P, L = prompts.shape
    batch = prompts.repeat_interleave(G, dim=0)
    B = batch.shape[0]
    gen = torch.Generator().manual_seed(1)
    logits_of = (lambda h, w: h @ w.t()) if m.tied else (lambda h, w: F.linear(h, w))
    times = []
    cpu = []  # the process's CPU time (all threads) per iteration
    phases = {}
    phase_cpu = {}
    for it in range(inp["iterations"] + 1):
        t0 = time.perf_counter()
        c0 = time.process_time()
        marks = []

        def mark(phase):
            marks.append((phase, time.perf_counter(), time.process_time()))

        with torch.inference_mode():
            head = m.head().detach()
            key_mask = torch.ones(B, L)
            hidden, cache = m.forward(batch, torch.arange(L).unsqueeze(0).expand(B, L), key_mask)
            toks, old = [], []
            pos = torch.full((B, 1), L, dtype=torch.long)
            for t in range(N):
                logp = torch.log_softmax(logits_of(hidden[:, -1], head), dim=-1)
                tok = torch.multinomial(logp.exp(), 1, generator=gen)
                toks.append(tok)
                old.append(logp.gather(-1, tok))
                if t == N - 1:
                    break
                key_mask = torch.cat([key_mask, torch.ones(B, 1)], dim=1)
                hidden, cache = m.forward(tok, pos, key_mask, cache)
                pos = pos + 1
            response = torch.cat(toks, dim=1)
            old_logp = torch.cat(old, dim=1)
        # Leave inference mode: these feed the differentiated loss.
        response, old_logp = response.clone(), old_logp.clone()
        mark("sampling (generate)")
        rewards = torch.randint(0, 2, (B,), generator=gen).float().view(P, G)
        mark("rewards")
        adv = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-6)).view(B, 1)
        mark("advantages")
        seq = torch.cat([batch, response], dim=1)
        T = seq.shape[1] - 1
        positions = torch.arange(T).unsqueeze(0).expand(B, T)
        mark("batching")
        with torch.inference_mode():
            ref_hidden, _ = ref.forward(seq[:, :-1], positions)
            ref_logits = logits_of(ref_hidden[:, L - 1 :], ref.head())
            ref_logp = torch.log_softmax(ref_logits, dim=-1).gather(-1, response.unsqueeze(-1)).squeeze(-1)
        ref_logp = ref_logp.clone()
        mark("reference log-probs")
        opt.zero_grad(set_to_none=True)
        hidden, _ = m.forward(seq[:, :-1], positions)
        logp = torch.log_softmax(logits_of(hidden[:, L - 1 :], m.head()), dim=-1).gather(-1, response.unsqueeze(-1)).squeeze(-1)
        ratio = torch.exp(torch.clamp(logp - old_logp, -20, 20))
        loss = torch.maximum(-adv * ratio, -adv * torch.clamp(ratio, 0.8, 1.2)).mean()
        loss = loss + kl_coef * (0.5 * (logp - ref_logp) ** 2).mean()
        loss.backward()
        mark("forward and backward")
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        mark("optimizer (clip, AdamW)")
        if it > 0:  # the first iteration is warm-up
            times.append((time.perf_counter() - t0) * 1e3)
            cpu.append((time.process_time() - c0) * 1e3)
            last, last_cpu = t0, c0
            for phase, t, c in marks:
                phases.setdefault(phase, []).append((t - last) * 1e3)
                phase_cpu.setdefault(phase, []).append((c - last_cpu) * 1e3)
                last, last_cpu = t, c
    with open("/proc/self/maps") as f:
        blas_lib = ", ".join(sorted({l.split()[-1] for l in f if "blas" in l.lower() and "/" in l})) or "unknown"
    print(json.dumps({"iteration_ms": times, "cpu_ms": cpu, "phase_ms": phases, "phase_cpu_ms": phase_cpu, "torch_version": torch.__version__, "blas_lib": blas_lib}))


if __name__ == "__main__":
    main()
