"""A bare asyncio/aiohttp client for bench:serve (the HTTP library PBH's openai engine uses): Poisson arrivals, a concurrency cap, TTFT and TPOT from the arrival.

    python scripts/serve_bare_loop.py BASE_URL MODEL ENDPOINT PROMPTS.json MAX_NEW ARRIVALS.json CONCURRENCY TOKENIZER

What a careful user writes without PBH, on the same requests (the same body): one warmup request, then each request waits for its arrival (ns after the start, the same Poisson
draws PBH makes) and a slot, streams, and times its chunks; output tokens are counted with the same tokenizer.json.
Prints one JSON line: ttft_ms and tpot_ms per request.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp
from tokenizers import Tokenizer


async def main(base: str, model: str, endpoint: str, prompts: list[str], max_new: int, arrivals_ns: list[int], concurrency: int, tokenizer: Tokenizer) -> dict[str, list[float]]:
    arrivals = [ns / 1e9 for ns in arrivals_ns]
    url = f"{base}/chat/completions" if endpoint == "chat" else f"{base}/completions"
    slots = asyncio.Semaphore(concurrency)
    ttft: list[float] = []
    tpot: list[float] = []
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency, keepalive_timeout=3600)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as client:

        async def one(text: str, arrival: float) -> None:
            async with slots:
                # The body PBH sends, as vLLM's bench serve sends it: usage in the last chunk.
                body = {"model": model, "max_tokens": max_new, "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}
                body |= {"messages": [{"role": "user", "content": text}]} if endpoint == "chat" else {"prompt": text}
                times, out = [], []
                async with client.post(url, json=body) as response:
                    async for raw in response.content:
                        line = raw.decode().strip()
                        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                            continue
                        for choice in json.loads(line[5:]).get("choices") or []:
                            piece = (choice.get("delta") or {}).get("content") if endpoint == "chat" else choice.get("text")
                            if piece:
                                times.append(time.perf_counter())
                                out.append(piece)
            n = len(tokenizer.encode("".join(out), add_special_tokens=False).ids)
            ttft.append((times[0] - arrival) * 1e3)
            tpot.append((times[-1] - times[0]) / (n - 1) * 1e3 if n > 1 else 0.0)

        # One untimed request first (PBH's warmup_batches: 1), and every connection opened before the schedule.
        await one(prompts[0], time.perf_counter())
        async def touch() -> None:
            async with client.get(base) as response:
                await response.read()

        await asyncio.gather(*(touch() for _ in range(concurrency)))
        ttft.clear()
        tpot.clear()
        start = time.perf_counter()
        tasks = []
        for text, a in zip(prompts, arrivals):
            delay = start + a - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(text, start + a)))
        await asyncio.gather(*tasks)
    return {"ttft_ms": ttft, "tpot_ms": tpot}


if __name__ == "__main__":
    base, model, endpoint, prompts_file, max_new, arrivals_file, concurrency, tokenizer = sys.argv[1:9]
    texts = json.load(open(prompts_file))
    arrivals_ns = json.load(open(arrivals_file))
    print(json.dumps(asyncio.run(main(base, model, endpoint, texts, int(max_new), arrivals_ns, int(concurrency), Tokenizer.from_file(tokenizer)))))
