"""Next-token training of a transformers causal LM on random windows of the tokenized text (seeded: same seed, same
weights on the same machine), and its held-out loss as PBH's perplexity scores it."""

from __future__ import annotations

import math

import numpy as np

WINDOW = 64
BATCH = 16
STEPS = 400
LR = 3e-3
WARMUP = 20


def train(model, ids: np.ndarray, seed: int, log) -> float:
    """Trains in place with AdamW and a cosine schedule; returns the mean loss of the last 20 steps."""
    import torch

    torch.manual_seed(seed)
    data = torch.from_numpy(ids.astype(np.int64))
    rng = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * min(s, STEPS) / STEPS)),
    )
    offsets = torch.arange(WINDOW)
    model.train()
    tail: list[float] = []
    for step in range(STEPS):
        starts = torch.randint(0, len(data) - WINDOW, (BATCH,), generator=rng)
        x = data[starts[:, None] + offsets]
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step >= STEPS - 20:
            tail.append(loss.item())
        if step % 100 == 0 or step == STEPS - 1:
            log(f'  step {step:4d} loss {loss.item():.3f}')
    model.eval()
    return float(np.mean(tail))


def held_out_nll(model, ids: np.ndarray, context: int) -> float:
    """Mean next-token negative log-likelihood (nats per token) over non-overlapping windows of `context` tokens."""
    import torch

    windows = [ids[i:i + context] for i in range(0, len(ids) - context + 1, context)]
    total, count = 0.0, 0
    with torch.no_grad():
        for w in windows:
            x = torch.from_numpy(w.astype(np.int64))[None]
            logp = torch.log_softmax(model(input_ids=x).logits[0, :-1].float(), dim=-1)
            total -= float(logp.gather(1, x[0, 1:, None]).sum())
            count += len(w) - 1
    return total / count
