# SPDX-License-Identifier: LGPL-2.1-or-later
"""Example decoders with seeded random weights: Llama-style (RMSNorm, RoPE,
GQA, SwiGLU), GPT-2-style (LayerNorm, learned positions, GELU MLP, tied
embeddings) and a Mixtral-style mixture of experts.

``forward(input_ids)`` runs the prompt, then ``decode_steps`` greedy decode
steps, each feeding its token to the next, all in one graph: the Python
loop unrolls when torch.fx traces it.  The KV cache is explicit: one key
and one value tensor per layer, created in the graph and extended by
``index_copy`` (a cache update the capture names ``kv``).  Shapes are
Python integers fixed at construction, so the graph is static.
"""
from __future__ import annotations

import math
from typing import List, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _act(name: str, x: torch.Tensor) -> torch.Tensor:
    if name == "silu":
        return F.silu(x)
    if name == "relu":
        return F.relu(x)
    return F.gelu(x, approximate="tanh" if name == "gelu_new" else "none")


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, max_len: int):
        super().__init__()
        self.cfg = cfg
        self.max_len = max_len
        bias = cfg.model_type == "gpt2"
        h, d = cfg.num_attention_heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, h * d, bias=bias)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.kv_dim, bias=bias)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.kv_dim, bias=bias)
        self.o_proj = nn.Linear(h * d, cfg.hidden_size, bias=bias)

    def forward(self, x: torch.Tensor, start: int, n: int, cache: Tuple[torch.Tensor, torch.Tensor],
                rope: Tuple[torch.Tensor, torch.Tensor]):
        cfg = self.cfg
        b = x.shape[0]
        h, kvh, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        q = self.q_proj(x).view(b, n, h, d).transpose(1, 2)
        k = self.k_proj(x).view(b, n, kvh, d).transpose(1, 2)
        v = self.v_proj(x).view(b, n, kvh, d).transpose(1, 2)
        if cfg.model_type != "gpt2":
            cos, sin = rope[0][start:start + n], rope[1][start:start + n]
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        pos = torch.arange(start, start + n, device=x.device)
        k_cache = cache[0].index_copy(2, pos, k)
        v_cache = cache[1].index_copy(2, pos, v)
        end = start + n
        first = 0 if cfg.sliding_window is None else max(0, end - cfg.sliding_window - n + 1)
        keys, values = k_cache[:, :, first:end], v_cache[:, :, first:end]
        if kvh != h:
            keys = keys.repeat_interleave(h // kvh, dim=1)
            values = values.repeat_interleave(h // kvh, dim=1)
        scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(d)
        if n > 1 or cfg.sliding_window is not None:
            i = torch.arange(start, end, device=x.device).unsqueeze(1)
            j = torch.arange(first, end, device=x.device).unsqueeze(0)
            allowed = j <= i
            if cfg.sliding_window is not None:
                allowed = allowed & (j > i - cfg.sliding_window)
            scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, values).transpose(1, 2).reshape(b, n, h * d)
        return self.o_proj(out), (k_cache, v_cache)


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.act = cfg.hidden_act
        self.gated = cfg.model_type != "gpt2"
        bias = not self.gated
        if self.gated:
            self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=bias)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            return self.down_proj(_act(self.act, self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(_act(self.act, self.up_proj(x)))


class MoE(nn.Module):
    """Top-k routed experts, evaluated densely: every expert runs and
    unselected ones get a zero gate, so shapes do not depend on routing."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.topk = cfg.num_experts_per_tok
        self.nexp = cfg.num_local_experts
        self.router = nn.Linear(cfg.hidden_size, self.nexp, bias=False)
        self.experts = nn.ModuleList(MLP(cfg) for _ in range(self.nexp))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.router(x)
        top = torch.topk(logits, self.topk, dim=-1)
        vals, idx = top[0], top[1]
        gates = torch.zeros_like(logits).scatter(-1, idx, torch.softmax(vals, dim=-1))
        out = gates[..., 0:1] * self.experts[0](x)
        for e in range(1, self.nexp):
            out = out + gates[..., e:e + 1] * self.experts[e](x)
        return out


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, max_len: int):
        super().__init__()
        norm = (lambda: nn.LayerNorm(cfg.hidden_size, eps=cfg.norm_eps)) \
            if cfg.model_type == "gpt2" else (lambda: RMSNorm(cfg.hidden_size, cfg.norm_eps))
        self.input_norm = norm()
        self.attn = Attention(cfg, max_len)
        self.post_norm = norm()
        self.mlp = MoE(cfg) if cfg.num_local_experts else MLP(cfg)

    def forward(self, x, start: int, n: int, cache, rope):
        a, cache = self.attn(self.input_norm(x), start, n, cache, rope)
        x = x + a
        return x + self.mlp(self.post_norm(x)), cache


class Decoder(nn.Module):
    """A prompt of ``prompt_len`` tokens, then ``decode_steps`` greedy steps.
    Returns (generated token ids [batch, decode_steps], last logits)."""

    def __init__(self, cfg: ModelConfig, prompt_len: int, decode_steps: int, batch: int = 1):
        super().__init__()
        self.cfg = cfg
        self.prompt_len, self.decode_steps, self.batch = prompt_len, decode_steps, batch
        self.max_len = prompt_len + decode_steps
        if self.max_len > cfg.max_position_embeddings:
            raise ValueError(f"prompt {prompt_len} + {decode_steps} decode steps exceed "
                             f"max_position_embeddings {cfg.max_position_embeddings}")
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        if cfg.model_type == "gpt2":
            self.embed_positions = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
            self.norm = nn.LayerNorm(cfg.hidden_size, eps=cfg.norm_eps)
        else:
            d = cfg.head_dim
            inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, d, 2).float() / d))
            ang = torch.outer(torch.arange(self.max_len).float(), inv)
            ang = torch.cat((ang, ang), dim=-1)
            self.register_buffer("rope_cos", ang.cos())
            self.register_buffer("rope_sin", ang.sin())
            self.norm = RMSNorm(cfg.hidden_size, cfg.norm_eps)
        self.layers = nn.ModuleList(Block(cfg, self.max_len) for _ in range(cfg.num_hidden_layers))
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    def _pass(self, ids: torch.Tensor, start: int, n: int, caches: List):
        x = self.embed_tokens(ids)
        if self.cfg.model_type == "gpt2":
            x = x + self.embed_positions(torch.arange(start, start + n, device=ids.device))
        if not caches:
            # The caches take the activations' dtype and device (module.to(),
            # or an offloader that moves each layer's weights when it runs).
            cfg = self.cfg
            shape = (self.batch, cfg.num_key_value_heads, self.max_len, cfg.head_dim)
            caches.extend((torch.zeros(shape, dtype=x.dtype, device=x.device),
                           torch.zeros(shape, dtype=x.dtype, device=x.device))
                          for _ in range(cfg.num_hidden_layers))
        rope = (None, None) if self.cfg.model_type == "gpt2" else (self.rope_cos, self.rope_sin)
        for i, layer in enumerate(self.layers):
            x, caches[i] = layer(x, start, n, caches[i], rope)
        return self.lm_head(self.norm(x[:, -1:]))

    def forward(self, input_ids: torch.Tensor):
        caches: List[Tuple[torch.Tensor, torch.Tensor]] = []
        logits = self._pass(input_ids, 0, self.prompt_len, caches)
        tokens = []
        for step in range(self.decode_steps):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(nxt)
            if step + 1 < self.decode_steps:
                logits = self._pass(nxt, self.prompt_len + step, 1, caches)
        return torch.cat(tokens, dim=1), logits


class Prefill(nn.Module):
    """A Decoder's prompt alone, for a KV cache handed to another node:
    returns (last logits, the KV cache as one tensor [layers, 2 (key,
    value), batch, kv heads, max_len, head_dim])."""

    def __init__(self, decoder: Decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, input_ids: torch.Tensor):
        d = self.decoder
        caches: List[Tuple[torch.Tensor, torch.Tensor]] = []
        logits = d._pass(input_ids, 0, d.prompt_len, caches)
        return logits, torch.stack([torch.stack(c) for c in caches])


class Decode(nn.Module):
    """A Decoder's decode steps from a Prefill's KV cache: ``forward(token,
    kv_cache)`` with ``token`` the argmax of the prompt's logits returns
    what Decoder.forward returns (the same tokens and last logits)."""

    def __init__(self, decoder: Decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, token: torch.Tensor, kv_cache: torch.Tensor):
        d = self.decoder
        caches = [(kv_cache[i, 0], kv_cache[i, 1]) for i in range(d.cfg.num_hidden_layers)]
        tokens, logits, nxt = [token], None, token
        for step in range(d.decode_steps - 1):
            logits = d._pass(nxt, d.prompt_len + step, 1, caches)
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(nxt)
        return torch.cat(tokens, dim=1), logits
