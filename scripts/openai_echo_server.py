"""A loopback OpenAI-compatible server that streams max_tokens chunks at once: the floor of a client's own timing.

    python scripts/openai_echo_server.py [--port 0] [--itl-ms 0]

Prints `listening on http://127.0.0.1:PORT/v1` when ready. Serves GET /v1/models and POST /v1/completions and
/v1/chat/completions (streamed, server-sent events, with a usage block), HTTP/1.1 keep-alive, on plain asyncio
streams so the server adds as little as possible. Each chunk carries the word " tok"; --itl-ms waits between chunks
(0: the whole stream goes in one write).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json

MODEL = "echo"


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(chat: bool) -> dict[str, object]:
    choice = {"index": 0, "delta": {"content": " tok"}} if chat else {"index": 0, "text": " tok"}
    return {"id": "echo", "object": "chat.completion.chunk" if chat else "text_completion", "model": MODEL, "choices": [choice]}


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, itl_s: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:] if l)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if method == "GET" and target.endswith("/models"):
                payload = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(payload), payload))
                await writer.drain()
                continue
            if method != "POST" or not (target.endswith("/completions")):
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
                continue
            req = json.loads(body)
            chat = target.endswith("/chat/completions")
            n = int(req.get("max_tokens") or 16)
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            chunk = _chunked(b"data: %s\n\n" % json.dumps(_event(chat)).encode())
            usage = {"id": "echo", "model": MODEL, "choices": [], "usage": {"prompt_tokens": 0, "completion_tokens": n, "total_tokens": n}}
            tail = _chunked(b"data: %s\n\ndata: [DONE]\n\n" % json.dumps(usage).encode()) + b"0\r\n\r\n"
            if not itl_s:
                # The whole stream in one write: one send a request, so the server's share of the floor is small.
                writer.write(head + chunk * n + tail)
            else:
                writer.write(head + chunk)
                for _ in range(n - 1):
                    await writer.drain()
                    await asyncio.sleep(itl_s)
                    writer.write(chunk)
                writer.write(tail)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionResetError):
        pass
    finally:
        writer.close()


async def main(port: int, itl_ms: float) -> None:
    server = await asyncio.start_server(lambda r, w: _handle(r, w, itl_ms / 1e3), "127.0.0.1", port, backlog=1024)
    print(f"listening on http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--itl-ms", type=float, default=0.0)
    args = parser.parse_args()
    # It stands in for a server that costs the client nothing: a collection would stall every stream it holds, and
    # bench:serve would count that stall as the client's floor. Its requests leave next to nothing to collect
    # (docs/measurements.md).
    gc.freeze()
    gc.disable()
    asyncio.run(main(args.port, args.itl_ms))
