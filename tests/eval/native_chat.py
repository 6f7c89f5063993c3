"""A Qwen2.5-style chat template with tools, and a local tokenizer that uses it (no download).

The template follows the shape of Qwen2.5-Instruct's: the tool schemas in the system turn inside
``<tools>``, assistant calls as ``<tool_call>`` JSON blocks, tool results as ``<tool_response>``
blocks in a user turn. Written here so the tests do not depend on any hub file.
"""

from __future__ import annotations

import json
from typing import Any

QWEN_STYLE_TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' + (messages[0]['content'] if messages[0]['role'] == 'system' "
    "else 'You are a helpful assistant.') }}"
    "{{- '\\n\\n# Tools\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags.<|im_end|>\\n' }}"
    "{%- elif messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' or (message.role == 'system' and not loop.first)"
    " or (message.role == 'assistant' and not message.tool_calls) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{{- '<|im_start|>assistant' }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' + tool_call.name + '\", \"arguments\": ' "
    "+ (tool_call.arguments | tojson) + '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if loop.index0 == 0 or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def qwen_style_tokenizer(model_dir: str) -> Any:
    """The local tiny model's byte-level BPE tokenizer with the Qwen-style tool template."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    tok.chat_template = QWEN_STYLE_TEMPLATE
    return tok


def hermes_calls(action: str) -> str:
    """An action as the template spells assistant tool calls: one ``<tool_call>`` block per call
    (what an instruct model trained on this template emits)."""
    from osint_gym.actions import parse_action

    parsed = parse_action(action)
    assert parsed.ok, parsed.error
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.args}, ensure_ascii=False) + "\n</tool_call>"
        for c in parsed.calls
    )
