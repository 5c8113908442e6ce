"""PyTorch's peak memory for one FSDP-shaped training step, to set beside Trinity's estimate (bench/gpu-check.sh).

The step is what veRL's FSDP actor does on one GPU with fsdp_size 1 and gradient checkpointing: fp32 weights (veRL's
actor model_dtype), a bf16 autocast forward of TOKENS tokens through a Qwen2-shaped decoder (q/k/v bias, GQA,
SwiGLU, RMSNorm) with each layer checkpointed, fp32 logits over the vocabulary, a cross-entropy loss (SFT, no
entropy term), backward, and an AdamW step. Weights are random; the shape is read from a Hugging Face config.json.

    python3 bench/gpu_memory_step.py CONFIG_JSON TOKENS   ->   one JSON line: {"peak_allocated": bytes, ...}
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, heads, kv = c["hidden_size"], c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
        self.d = c.get("head_dim") or h // heads
        self.heads, self.kv = heads, kv
        self.q = nn.Linear(h, heads * self.d)
        self.k = nn.Linear(h, kv * self.d)
        self.v = nn.Linear(h, kv * self.d)
        self.o = nn.Linear(heads * self.d, h, bias=False)
        self.gate = nn.Linear(h, c["intermediate_size"], bias=False)
        self.up = nn.Linear(h, c["intermediate_size"], bias=False)
        self.down = nn.Linear(c["intermediate_size"], h, bias=False)
        self.n1 = nn.RMSNorm(h)
        self.n2 = nn.RMSNorm(h)

    def forward(self, x):
        t = x.shape[1]
        y = self.n1(x)
        q = self.q(y).view(1, t, self.heads, self.d).transpose(1, 2)
        k = self.k(y).view(1, t, self.kv, self.d).transpose(1, 2)
        v = self.v(y).view(1, t, self.kv, self.d).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(1, t, -1))
        y = self.n2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = nn.RMSNorm(c["hidden_size"])
        self.tied = c.get("tie_word_embeddings", True)
        self.head = None if self.tied else nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = checkpoint(layer, x, use_reentrant=False)
        x = self.norm(x)
        return F.linear(x, self.embed.weight) if self.tied else self.head(x)


def main():
    config = json.load(open(sys.argv[1]))
    tokens = int(sys.argv[2])
    device = torch.device("cuda")
    model = Decoder(config).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)
    ids = torch.randint(0, config["vocab_size"], (1, tokens), device=device)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.float().view(-1, config["vocab_size"]), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print(
        json.dumps(
            {
                "params": sum(p.numel() for p in model.parameters()),
                "tokens": tokens,
                "peak_allocated": torch.cuda.max_memory_allocated(),
                "peak_reserved": torch.cuda.max_memory_reserved(),
                "total_memory": torch.cuda.get_device_properties(0).total_memory,
                "device": torch.cuda.get_device_name(0),
                "torch": torch.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
