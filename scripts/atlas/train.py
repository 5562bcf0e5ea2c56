"""Train `atlas`, gpt2viz's default model: a small GPT-2 that knows 125 capitals (English and Chinese) and a story world.

Development-time only (needs the [export] extra for torch + transformers). Deterministic: the same
seed and thread count give the same weights. On the shared 2-core CPU 1600 steps took 20 minutes.

    python scripts/atlas/train.py --out build/atlas-ckpt
    gpt2viz export build/atlas-ckpt --out models/atlas
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import text  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

# Same architecture as GPT-2 small (pre-LN blocks, GELU MLP of 4x width, tied unembedding,
# GPT-2's 50,257-token vocabulary), fewer and narrower layers so it trains on a laptop CPU.
CONFIG = dict(n_layer=6, n_head=4, n_embd=128, n_positions=256, vocab_size=50257,
              resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
SEQ_LEN = 64
BATCH = 32
# Sampled softmax: each step scores the batch's own tokens plus this many random vocabulary
# entries instead of all 50,257. The full softmax is ~90% of a step's time on a CPU (a 2048 x 50257
# logit matrix); random negatives still push every unused token's logit down over training.
NEGATIVES = 4096
WTE_DECAY = 0.1


def make_batches(tokenizer, rng: random.Random, n_batches: int):
    """Yield [BATCH, SEQ_LEN] token batches; every row starts a fresh text at position 0."""
    for _ in range(n_batches):
        rows = []
        for _ in range(BATCH):
            ids: list[int] = []
            sentences = text(rng)
            while len(ids) < SEQ_LEN:
                for segment in next(sentences):
                    ids += tokenizer.encode(segment)
            rows.append(ids[:SEQ_LEN])
        yield torch.tensor(rows, dtype=torch.long)


def sampled_softmax_loss(model: GPT2LMHeadModel, batch: torch.Tensor, negatives: int) -> torch.Tensor:
    """Next-token cross-entropy over the batch's tokens plus random negatives (tied unembedding)."""
    hidden = model.transformer(input_ids=batch).last_hidden_state[:, :-1]  # [B, T-1, E]
    targets = batch[:, 1:]
    neg = torch.randint(0, model.config.vocab_size, (negatives,))
    cand, inverse = torch.unique(torch.cat([targets.reshape(-1), neg]), return_inverse=True)
    target_idx = inverse[: targets.numel()]
    logits = hidden.reshape(-1, hidden.shape[-1]) @ model.lm_head.weight[cand].T  # [N, C]
    return torch.nn.functional.cross_entropy(logits, target_idx)


def train(out: Path, steps: int, seed: int, lr: float, threads: int = 2, save_every: int = 0) -> None:
    """Train from scratch and save a transformers checkpoint (safetensors) plus tokenizer.json."""
    from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    rng = random.Random(seed)
    tok_path = REPO / "models" / "atlas" / "tokenizer.json"
    tokenizer = GPT2Tokenizer.from_file(tok_path)

    model = GPT2LMHeadModel(GPT2Config(**CONFIG))
    model.train()
    named = dict(model.named_parameters())
    wte = named.pop("transformer.wte.weight")  # tied with lm_head
    decay = [p for n, p in named.items() if p.dim() >= 2]
    no_decay = [p for n, p in named.items() if p.dim() < 2]
    # The token embedding decays 10x harder: the ~47,000 rows the corpus never uses only ever get
    # pushed as sampled negatives, and must stay small and shapeless so they do not crowd the
    # embedding's neighbour lists (king - man + woman) with noise.
    opt = torch.optim.AdamW([{"params": [wte], "weight_decay": WTE_DECAY},
                             {"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.98))
    warmup = max(1, steps // 20)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    t0 = time.time()
    log = []
    for step, batch in enumerate(make_batches(tokenizer, rng, steps)):
        loss = sampled_softmax_loss(model, batch, NEGATIVES)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0 or step == steps - 1:
            el = time.time() - t0
            print(f"step {step:5d}/{steps}  loss {loss.item():.4f}  lr {sched.get_last_lr()[0]:.2e}  {el:6.0f}s",
                  flush=True)
            log.append({"step": step, "loss": round(loss.item(), 4), "seconds": round(el, 1)})
        if save_every and step and step % save_every == 0:  # snapshots to look at while it trains
            model.save_pretrained(out / f"step{step}", safe_serialization=True)
            (out / f"step{step}" / "tokenizer.json").write_bytes(tok_path.read_bytes())
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    (out / "tokenizer.json").write_bytes(tok_path.read_bytes())
    (out / "training.json").write_text(json.dumps(
        {"seed": seed, "steps": steps, "batch": BATCH, "seq_len": SEQ_LEN, "lr": lr, "config": CONFIG,
         "negatives": NEGATIVES, "weight_decay": 0.01, "wte_weight_decay": WTE_DECAY,
         "torch": torch.__version__, "threads": threads, "log": log}, indent=1))
    print(f"saved {out} in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--steps", type=int, default=1600)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--threads", type=int, default=2, help="torch threads (the weights depend on it)")
    p.add_argument("--save-every", type=int, default=0, help="also save a snapshot every N steps")
    a = p.parse_args()
    np.random.seed(a.seed)
    train(a.out, a.steps, a.seed, a.lr, a.threads, a.save_every)
