"""The raw floor for the harness benches: hand-written HTTP/1.1 keep-alive over asyncio streams + orjson.

``python raw_floor_client.py URL MODEL ROWS CONCURRENCY``: ``CONCURRENCY`` connections, one
``POST /chat/completions`` per row with the body the eval harness sends, the reply parsed with orjson.
No HTTP library at all: the least CPU Python can spend per request.
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


async def main(url: str, model: str, rows: int, concurrency: int) -> None:
    parts = urlsplit(url)
    path = (parts.path.rstrip("/") + "/chat/completions").encode()
    host = parts.hostname or "127.0.0.1"
    queue = iter(range(rows))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, parts.port)
        for i in queue:
            body = orjson.dumps(
                {
                    "model": model,
                    "messages": [
                        {"role": "system", "content": "Answer with a number."},
                        {"role": "user", "content": f"row {i}: what is {i} + 1?"},
                    ],
                }
            )
            writer.write(
                b"POST "
                + path
                + b" HTTP/1.1\r\nHost: "
                + host.encode()
                + b"\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            orjson.loads(await _read_response(reader))["choices"][0]["message"]
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
