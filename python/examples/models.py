# SPDX-License-Identifier: LGPL-2.1-or-later
"""Factories for `python3 -m hyperoffload.torch run python/examples/models.py:llama`.

Each returns (module, example_inputs): an example decoder from its
config.json with seeded random weights, a prompt and greedy decode steps.
"""
from hyperoffload.models import build


def llama():
    return build("llama-tiny", prompt_len=16, decode_steps=4)


def gpt2():
    return build("gpt2-tiny", prompt_len=16, decode_steps=4)


def moe():
    return build("moe-tiny", prompt_len=16, decode_steps=4)
