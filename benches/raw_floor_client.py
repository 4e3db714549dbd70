"""The raw floor for the harness benches: hand-written HTTP/1.1 keep-alive over asyncio streams + orjson.

``python raw_floor_client.py URL MODEL ROWS CONCURRENCY [BODIES [score]]``: ``CONCURRENCY`` connections,
one ``POST /chat/completions`` per row, the reply parsed with orjson. Without ``BODIES`` the body is the
one the eval harness sends for the small example rows; with ``BODIES`` (a JSONL file of request bodies,
row ``i`` taking line ``i`` modulo their number) each body is serialised per request as a harness does, and
with ``score`` the reply's content is parsed as the judge's ``{"score": ...}`` object. No HTTP library at
all: the least CPU Python can spend per request.
"""

import asyncio
import sys
from urllib.parse import urlsplit

import orjson


async def _read_response(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return await reader.readexactly(length)


def _bodies(model: str, path: str | None) -> list[object] | None:
    if path is None:
        return None
    with open(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


def _small_body(model: str, i: int) -> dict[str, object]:
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": "Answer with a number."},
            {"role": "user", "content": f"row {i}: what is {i} + 1?"},
        ],
    }


async def main(
    url: str, model: str, rows: int, concurrency: int, bodies_path: str | None, score: bool
) -> None:
    parts = urlsplit(url)
    path = (parts.path.rstrip("/") + "/chat/completions").encode()
    host = parts.hostname or "127.0.0.1"
    bodies = _bodies(model, bodies_path)
    queue = iter(range(rows))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, parts.port)
        for i in queue:
            body = orjson.dumps(bodies[i % len(bodies)] if bodies else _small_body(model, i))
            writer.write(
                b"POST "
                + path
                + b" HTTP/1.1\r\nHost: "
                + host.encode()
                + b"\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            message = orjson.loads(await _read_response(reader))["choices"][0]["message"]
            if score:
                float(orjson.loads(message["content"])["score"])
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


if __name__ == "__main__":
    args = sys.argv[1:]
    bodies_path = args[4] if len(args) > 4 else None
    asyncio.run(main(args[0], args[1], int(args[2]), int(args[3]), bodies_path, args[5:6] == ["score"]))
