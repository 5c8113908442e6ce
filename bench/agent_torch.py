#!/usr/bin/env python3
"""PyTorch CPU peer (c) of `npm run bench:agent`: one explorer step of multi-turn episodes on the same model.

All episodes go as one batch, turn by turn, keeping `past_key_values` across turns (the plain-PyTorch Qwen2 of
engine_torch.py, whose cache grows by torch.cat as Hugging Face's DynamicCache does): each turn feeds only the
tokens after the cache (the last turn's final sampled token, then the template and environment tokens the bench
recorded from its own run (a)), left-padded within the turn and masked, then samples that turn's token count with
the KV cache (temperature, torch.multinomial, each token's log-probability kept), rows that are done masked out.
usage: agent_torch.py MODEL_DIR INPUTS_JSON
INPUTS_JSON: {"episodes": [[{"glue": [...], "sample": n}, ...], ...], "threads": 2, "temperature": 1, "seed": 0}
prints one JSON line {"ms", "cpu_ms", "tokens", "torch_version", "blas_lib"}: the step's wall and CPU time (all
threads; model loading and a small warm-up excluded) and the episodes' tokens (every glue and sampled token).
"""
import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from engine_torch import Qwen2, read_safetensors  # noqa: E402


def run_step(m, episodes, temperature, gen):
    B = len(episodes)
    head = m.head().detach()
    logits_of = (lambda h: h @ head.t()) if m.tied else (lambda h: torch.nn.functional.linear(h, head))
    cache = None
    key_mask = torch.zeros(B, 0)
    fed = [0] * B  # real tokens in the cache per row
    pending = [[] for _ in range(B)]  # the last sampled token of the previous turn, not fed yet
    turns = max(len(e) for e in episodes)
    for k in range(turns):
        active = [k < len(e) for e in episodes]
        new = [pending[b] + episodes[b][k]["glue"] if active[b] else [] for b in range(B)]
        want = [episodes[b][k]["sample"] if active[b] else 0 for b in range(B)]
        P = max(1, max(len(n) for n in new))
        ids = torch.zeros(B, P, dtype=torch.long)
        pos = torch.zeros(B, P, dtype=torch.long)
        mask = torch.zeros(B, P)
        for b in range(B):
            n = len(new[b])
            if n:
                ids[b, P - n :] = torch.tensor(new[b])
                pos[b, P - n :] = torch.arange(fed[b], fed[b] + n)
                mask[b, P - n :] = 1
            fed[b] += n
        key_mask = torch.cat([key_mask, mask], dim=1)
        hidden, cache = m.forward(ids, pos, key_mask, cache)
        h = hidden[:, -1]
        steps = max(want)
        last = [None] * B
        for t in range(steps):
            logp = torch.log_softmax(logits_of(h) / temperature, dim=-1)
            tok = torch.multinomial(logp.exp(), 1, generator=gen)
            logp.gather(-1, tok)  # the sampled token's log-probability, as a rollout keeps it
            for b in range(B):
                if t < want[b]:
                    last[b] = int(tok[b, 0])
            if t == steps - 1:
                break
            # A row's token is fed (and stays in the cache) unless it was its turn's last.
            real = torch.tensor([1.0 if t < want[b] - 1 else 0.0 for b in range(B)]).view(B, 1)
            step_pos = torch.tensor([fed[b] if t < want[b] - 1 else 0 for b in range(B)]).view(B, 1)
            for b in range(B):
                if t < want[b] - 1:
                    fed[b] += 1
            key_mask = torch.cat([key_mask, real], dim=1)
            hidden, cache = m.forward(tok, step_pos, key_mask, cache)
            h = hidden[:, -1]
        pending = [[last[b]] if last[b] is not None else [] for b in range(B)]


def main():
    model_dir, inputs_path = sys.argv[1], sys.argv[2]
    with open(f"{model_dir}/config.json") as f:
        cfg = json.load(f)
    with open(inputs_path) as f:
        inp = json.load(f)
    torch.set_num_threads(inp.get("threads", 2))
    m = Qwen2(cfg, read_safetensors(f"{model_dir}/model.safetensors"))
    episodes = inp["episodes"]
    temperature = inp.get("temperature", 1.0)
    gen = torch.Generator().manual_seed(inp.get("seed", 0))
    with torch.inference_mode():
        run_step(m, [e[:1] for e in episodes[:2]], temperature, gen)  # warm-up (excluded)
        t0, c0 = time.perf_counter(), time.process_time()
        run_step(m, episodes, temperature, gen)
        ms, cpu_ms = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
    tokens = sum(len(t["glue"]) + t["sample"] for e in episodes for t in e)
    with open("/proc/self/maps") as f:
        blas_lib = ", ".join(sorted({l.split()[-1] for l in f if "blas" in l.lower() and "/" in l})) or "unknown"
    print(json.dumps({"ms": ms, "cpu_ms": cpu_ms, "tokens": tokens, "torch_version": torch.__version__, "blas_lib": blas_lib}))


if __name__ == "__main__":
    main()
