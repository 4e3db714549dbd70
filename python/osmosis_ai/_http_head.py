"""The compiled core's reader of HTTP/1.1 answer heads, for the direct model transport.

``osmosis_ai.llm`` imports only foundation modules; this one is its door to the core for answer heads.
:func:`response_framing` reads the plain head every model server sends (printable ASCII, a numeric status,
a ``Content-Length`` of digits if it has one) in one call: splitting it in Python (decode, split, a
partition, two strips and a lower per header, then ``int``) was the larger part of a response's parse. Any other head gives None, and
``osmosis_ai.llm.http1_connection`` reads it with its own rules, which the core mirrors on the plain form.
"""

from __future__ import annotations

from osmosis_ai._core import response_framing

__all__ = ["response_framing"]
