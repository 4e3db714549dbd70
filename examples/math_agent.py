"""The shipped agent loop: answers a math word problem, calling a calculator tool when the model asks.

Run it with `osmosis eval -m math_agent:agent_loop ...` from this folder (see `make demo`).
"""

import ast
import operator

from osmosis_ai.rollout import (
    RolloutAgentLoop,
    RolloutContext,
    RolloutResult,
    create_tool_error_result,
    create_tool_result,
    get_tool_call_info,
)

_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
}

CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression such as '12 * (3 + 4)'.",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string", "description": "The expression."}},
            "required": ["expression"],
        },
    },
}


def calculate(expression: str) -> float:
    """Evaluates + - * / ** and parentheses; anything else is refused."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.operand))
        raise ValueError(f"unsupported expression: {expression!r}")

    return walk(ast.parse(expression, mode="eval").body)


class MathAgentLoop(RolloutAgentLoop):
    name = "math_agent"

    def get_tools(self, request):
        return [CALCULATOR]

    async def run(self, ctx: RolloutContext) -> RolloutResult:
        messages = list(ctx.request.messages)
        for _ in range(ctx.request.max_turns):
            reply = await ctx.chat(messages, **ctx.request.completion_params)
            messages.append(reply.message)
            if not reply.has_tool_calls:
                return ctx.complete(messages, finish_reason=reply.finish_reason)
            for call in reply.tool_calls:
                call_id, _name, arguments = get_tool_call_info(call)
                try:
                    messages.append(create_tool_result(call_id, str(calculate(arguments["expression"]))))
                except (KeyError, ValueError, SyntaxError, ZeroDivisionError) as exc:
                    messages.append(create_tool_error_result(call_id, str(exc)))
                ctx.record_tool_call()
        return ctx.complete(messages, finish_reason="max_turns")


agent_loop = MathAgentLoop()
