"""The bridge's HTTP/1.1 server on a real 127.0.0.1 socket: keep-alive, request bodies, limits, failures;
then the bridge itself through the OpenAI SDK (plain and streamed) against the scripted model server."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from osmosis_ai.llm.bridge import LLMBridge
from osmosis_ai.llm.http1_server import Http1Server, HttpReply, HttpRequest
from osmosis_ai.llm.providers import resolve_endpoint
from osmosis_ai.llm.transport import make_transport


async def _echo(request: HttpRequest) -> HttpReply:
    if request.path == "/boom":
        raise RuntimeError("handler bug")
    payload = {"method": request.method, "path": request.path, "body": request.body.decode()}
    return HttpReply(200, orjson.dumps(payload))


async def _read_reply(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    return int(head[0].split(" ")[1]), headers, await reader.readexactly(int(headers["content-length"]))


def _serve(test: Any, **options: Any) -> Any:
    async def main() -> Any:
        server = await Http1Server(_echo, **options).start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            try:
                return await test(reader, writer, server)
            finally:
                writer.close()
        finally:
            await server.aclose()

    return asyncio.run(main())


def test_one_connection_carries_many_requests_until_close() -> None:
    async def test(reader: Any, writer: Any, server: Any) -> list[Any]:
        replies = []
        for i in range(3):
            writer.write(f"POST /x/{i} HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{i}{i}".encode())
            replies.append(await _read_reply(reader))
        writer.write(b"POST /last HTTP/1.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        replies.append(await _read_reply(reader))
        assert await reader.read() == b""  # the server closed it, as asked
        return replies

    replies = _serve(test)
    assert [orjson.loads(body)["body"] for _, _, body in replies[:3]] == ["00", "11", "22"]
    assert replies[3][0] == 200 and replies[3][1]["connection"] == "close"


def test_chunked_and_expect_continue_bodies_are_read_whole() -> None:
    async def test(reader: Any, writer: Any, server: Any) -> tuple[bytes, Any]:
        writer.write(
            b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n"
        )
        chunked = await _read_reply(reader)
        writer.write(b"POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        interim = await reader.readuntil(b"\r\n\r\n")
        writer.write(b"xyz")
        return interim, (chunked, await _read_reply(reader))

    interim, (chunked, continued) = _serve(test)
    assert orjson.loads(chunked[2])["body"] == "abcde"
    assert interim.startswith(b"HTTP/1.1 100") and orjson.loads(continued[2])["body"] == "xyz"


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /big HTTP/1.1\r\nContent-Length: 100\r\n\r\n", 413),
        (b"POST /big HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + b"a" * 64 + b"\r\n", 413),
        (b"garbage\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nContent-Length: nope\r\n\r\n", 400),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 70_000, 400),
        (b"POST /x HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    ],
)
def test_bad_requests_get_an_error_and_a_closed_connection(request_bytes: bytes, status: int) -> None:
    async def test(reader: Any, writer: Any, server: Any) -> tuple[int, bytes]:
        writer.write(request_bytes)
        reply = await _read_reply(reader)
        return reply[0], await reader.read()

    assert _serve(test, max_body=32) == (status, b"")


def test_a_failing_handler_answers_500_and_the_connection_goes_on() -> None:
    async def test(reader: Any, writer: Any, server: Any) -> tuple[Any, Any]:
        writer.write(b"POST /boom HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        failed = await _read_reply(reader)
        writer.write(b"POST /fine HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        return failed, await _read_reply(reader)

    failed, fine = _serve(test)
    assert failed[0] == 500 and "handler bug" in orjson.loads(failed[2])["error"]["message"]
    assert fine[0] == 200


def test_closing_the_server_closes_idle_keep_alive_connections() -> None:
    async def test(reader: Any, writer: Any, server: Any) -> bytes:
        writer.write(b"POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        await _read_reply(reader)
        await server.aclose()
        return await asyncio.wait_for(reader.read(), 5)

    assert _serve(test) == b""


def test_the_bridge_serves_the_openai_sdk_plain_and_streamed(scripted: Any) -> None:
    openai = pytest.importorskip("openai")
    server = scripted({"default": {"content": "42", "usage": {"prompt_tokens": 5, "completion_tokens": 2}}})

    async def main() -> tuple[Any, str, Any, list[int]]:
        transport = make_transport(resolve_endpoint("m", base_url=server.base_url, api_key="sk-local"))
        try:
            async with LLMBridge(transport) as bridge:
                client = openai.AsyncOpenAI(
                    base_url=bridge.url_for("r1"), api_key=bridge.token, max_retries=0
                )
                messages = [{"role": "user", "content": "6 x 7?"}]
                plain = await client.chat.completions.create(model="m", messages=messages)
                stream = await client.chat.completions.create(
                    model="m", messages=messages, stream=True, stream_options={"include_usage": True}
                )
                chunks = [chunk async for chunk in stream]
                streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                usage = next(c.usage for c in chunks if c.usage)
                statuses = []
                refused = openai.AsyncOpenAI(base_url=bridge.url_for("r1"), api_key="wrong", max_retries=0)
                with pytest.raises(openai.AuthenticationError):
                    await refused.chat.completions.create(model="m", messages=messages)
                reader, writer = await asyncio.open_connection("127.0.0.1", bridge.port)
                for line in (
                    b"POST /v1/elsewhere HTTP/1.1",
                    b"GET /v1/rollouts/r1/chat/completions HTTP/1.1",
                ):
                    writer.write(line + b"\r\nContent-Length: 0\r\n\r\n")
                    statuses.append((await _read_reply(reader))[0])
                writer.close()
                await client.close()
                await refused.close()
                return plain, streamed, usage, statuses
        finally:
            await transport.aclose()

    plain, streamed, usage, statuses = asyncio.run(main())
    assert plain.choices[0].message.content == "42" and plain.usage.completion_tokens == 2
    assert streamed == "42" and usage.total_tokens == 7
    assert statuses == [404, 405]
