"""Any OpenAI-compatible endpoint: completions or chat completions, streamed (server-sent events), over aiohttp.

The worker issues the whole schedule itself (capability serve, pbh_worker/serving.py); this file sends one request
and records, as they arrive, the new connection (if the pool had none free), the response headers (time to first
byte) and each chunk that carries text. aiohttp, not httpx: its HTTP parser is C (llhttp), so the client's own cost
per streamed chunk is a fraction of httpx's pure-Python h11 (docs/measurements.md, "bench:serve"). Output tokens are
counted with the model's tokenizer.json where PBH has it (the model folder's, or the `tokenizer` option), else from
the server's usage block.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any, AsyncIterator

import aiohttp

from pbh_worker import About, Engine, Loaded, Model, Precision, TensorSpec, WorkerError, serve
from pbh_worker.serving import Exchange, Send
from pbh_worker.sources import hf_folder


class OpenAiEndpoint(Engine):
    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.url = ""
        self.model_name = ""
        self.headers: dict[str, str] = {}
        self.tokenizer: Any = None

    def about(self) -> About:
        return About(version=aiohttp.__version__, details={"client": f"aiohttp {aiohttp.__version__} ClientSession, HTTP/1.1"})

    def _tokenizer(self, model: Model) -> tuple[Any, str | None]:
        path = model.options.get("tokenizer")
        if not path:
            folder = hf_folder(model.path, self.name) if os.path.exists(model.path) else None
            candidate = os.path.join(folder or os.path.dirname(model.path), "tokenizer.json")
            path = candidate if os.path.isfile(candidate) else None
        if not path:
            return None, None
        if not os.path.isfile(path):
            raise WorkerError("bad_request", f"engines[].options.tokenizer {path!r} is not a file: name a tokenizer.json, or leave it unset to count from the server's usage block")
        from tokenizers import Tokenizer  # noqa: PLC0415 - only when there is one to read

        return Tokenizer.from_file(path), path

    def load(self, model: Model) -> Loaded:
        o = dict(model.options)
        self.options = o
        base = str(o["base_url"]).rstrip("/")
        self.url = f"{base}/chat/completions" if o.get("endpoint") == "chat" else f"{base}/completions"
        key_env = o.get("api_key_env")
        self.headers = {}
        if key_env:
            key = os.environ.get(key_env)
            if not key:
                raise WorkerError("bad_request", f"engines[].options.api_key_env names {key_env!r}, which is unset or empty in PBH's environment: export it, or drop api_key_env for an endpoint without a key")
            self.headers["Authorization"] = f"Bearer {key}"
        status, served = self._listed(base)
        self.model_name = o.get("model") or (served[0] if served else "")
        if not self.model_name:
            raise WorkerError("bad_request", f"{base}/models lists no model (HTTP {status}): name it in engines[].options.model")
        self.tokenizer, tokenizer_path = self._tokenizer(model)
        return Loaded(
            # What the endpoint stands for: a decoder fed ids, giving logits (which it keeps to itself).
            inputs=[TensorSpec("input_ids", "int64", [None, None])],
            outputs=[TensorSpec("logits", "float32", [None, None, None])],
            # A server does not say what precision it executes in: the config's request stands, marked as such.
            precision=Precision(model.precision, "as configured: an OpenAI-compatible endpoint does not report what executed"),
            threads=None,
            facts={"endpoint": self.url, "served_model": self.model_name, "models_listed": served[:8], "tokenizer": tokenizer_path, "extra_body": o.get("extra_body") or {}},
        )

    def _listed(self, base: str) -> tuple[int, list[str]]:
        """BASE/models: its HTTP status and the model ids it lists (none where it is not 200)."""
        try:
            # No proxy from the environment, as the schedule's client (aiohttp's default) takes none.
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(urllib.request.Request(f"{base}/models", headers=self.headers), timeout=10.0) as r:
                return r.status, [m.get("id") for m in json.loads(r.read()).get("data", [])]
        except urllib.error.HTTPError as e:
            return e.code, []
        except (urllib.error.URLError, OSError) as e:
            raise WorkerError("runtime_error", f"the endpoint {base} does not answer ({type(e).__name__}: {e}): start the server, or fix engines[].options.base_url") from e

    def bind(self, batch: Any) -> Any:
        raise WorkerError("unsupported", "openai drives an endpoint in the generate workload only: add a generate: block to the config")

    def output_tokens(self, text: str) -> list[int] | None:
        return None if self.tokenizer is None else self.tokenizer.encode(text, add_special_tokens=False).ids

    def _body(self, text: str, max_new_tokens: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model_name, "max_tokens": max_new_tokens, "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}
        if self.options.get("endpoint") == "chat":
            body["messages"] = [{"role": "user", "content": text}]
        else:
            body["prompt"] = text
        return {**body, **(self.options.get("extra_body") or {})}

    @asynccontextmanager
    async def serve_session(self, concurrency: int) -> AsyncIterator[Send]:
        # One pool of `concurrency` kept-alive connections: the serving loop keeps at most that many requests in
        # flight, so a request never waits for a connection.
        connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency, keepalive_timeout=3600)
        tracing = aiohttp.TraceConfig()

        async def on_connect(session: Any, context: SimpleNamespace, params: Any) -> None:
            # Every request this session sends carries its Exchange (the warm-up's is discarded).
            if isinstance(context.trace_request_ctx, Exchange):
                context.trace_request_ctx.connected()

        tracing.on_connection_create_end.append(on_connect)
        timeout = aiohttp.ClientTimeout(total=float(self.options.get("timeout_s") or 600))
        chat = self.options.get("endpoint") == "chat"
        async with aiohttp.ClientSession(connector=connector, timeout=timeout, headers=self.headers, trace_configs=[tracing]) as client:
            if self.options.get("warm_pool", True):
                # Each connection opened before the schedule starts (as a long-running client holds them), by a
                # request any server answers cheaply and keeps the connection after (a 404 on the API root).
                base = self.url.rsplit("/", 2 if chat else 1)[0]

                async def warm() -> None:
                    async with client.get(base, trace_request_ctx=Exchange()) as response:
                        await response.read()

                await asyncio.gather(*(warm() for _ in range(concurrency)))

            async def send(text: str, ids: list[int], max_new_tokens: int, exchange: Exchange) -> None:
                async with client.post(self.url, json=self._body(text, max_new_tokens), trace_request_ctx=exchange) as response:
                    # The response is returned once its status line and headers are parsed.
                    exchange.first_byte()
                    if response.status != 200:
                        said = (await response.read()).decode(errors="replace")[:300]
                        raise WorkerError("runtime_error", f"{self.url} answered HTTP {response.status}: {said}")
                    async for line in response.content:
                        if not line.startswith(b"data:"):
                            continue
                        data = line[5:].strip()
                        # Read on to the end of the body after [DONE]: a response left unread closes its connection.
                        if data == b"[DONE]":
                            continue
                        chunk = json.loads(data)
                        if "error" in chunk:
                            raise WorkerError("runtime_error", f"{self.url} streamed an error: {str(chunk['error'])[:300]}")
                        usage = chunk.get("usage")
                        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                            exchange.usage_tokens = usage["completion_tokens"]
                        for choice in chunk.get("choices") or []:
                            piece = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
                            if piece:
                                exchange.chunk(piece)

            yield send


if __name__ == "__main__":
    serve(OpenAiEndpoint())
