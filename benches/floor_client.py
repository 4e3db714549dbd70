"""The floor for bench_eval: the least a Python client can do to send the same chat requests.

``python floor_client.py URL MODEL ROWS CONCURRENCY``: one aiohttp session, ``CONCURRENCY`` workers, one
``POST /chat/completions`` per row with the same body the harness sends, the reply parsed with orjson.
"""

import asyncio
import sys

import aiohttp
import orjson


async def main(url: str, model: str, rows: int, concurrency: int) -> None:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(rows):
        queue.put_nowait(i)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def worker() -> None:
            while not queue.empty():
                i = queue.get_nowait()
                body = {
                    "model": model,
                    "messages": [
                        {"role": "system", "content": "Answer with a number."},
                        {"role": "user", "content": f"row {i}: what is {i} + 1?"},
                    ],
                }
                async with session.post(url + "/chat/completions", data=orjson.dumps(body)) as response:
                    orjson.loads(await response.read())["choices"][0]["message"]

        await asyncio.gather(*(worker() for _ in range(concurrency)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
