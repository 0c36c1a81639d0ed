# SPDX-License-Identifier: LGPL-2.1-or-later
"""Transformers of the zoo: ViT, BERT, T5, torch's own encoder layer and
multi-head attention."""
import math

import torch
from torch import nn
from torch.nn import functional as F


def _seed(n: int) -> torch.Generator:
    torch.manual_seed(n)
    return torch.Generator().manual_seed(n + 1000)


# ---- ViT ----------------------------------------------------------------------

class ViTAttention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * (C // self.heads) ** -0.5
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class ViTBlock(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = ViTAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, image=16, patch=4, dim=32, depth=4, heads=4, classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        n = (image // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[ViTBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        B = x.shape[0]
        x = torch.cat([self.cls_token.expand(B, -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def vit():
    g = _seed(1)
    return ViT().eval(), (torch.randn(2, 3, 16, 16, generator=g),), \
        (torch.randn(2, 3, 16, 16, generator=g),)


# ---- BERT with an attention mask ------------------------------------------------

class BertEmbeddings(nn.Module):
    def __init__(self, vocab, dim, max_pos=64):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(max_pos, dim)
        self.token_type = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))

    def forward(self, input_ids, token_type_ids):
        S = input_ids.size(1)
        pos = self.position_ids[:, :S]
        e = self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids)
        return self.norm(e)


class BertSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)

    def split(self, x):
        B, S, _ = x.size()
        return x.view(B, S, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, h, mask):
        q, k, v = self.split(self.query(h)), self.split(self.key(h)), self.split(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), -1)


class BertLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = BertSelfAttention(dim, heads)
        self.attn_out = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim, eps=1e-12)
        self.inter = nn.Linear(dim, dim * 4)
        self.out = nn.Linear(dim * 4, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, h, mask):
        h = self.norm1(h + self.attn_out(self.attn(h, mask)))
        return self.norm2(h + self.out(F.gelu(self.inter(h))))


class Bert(nn.Module):
    def __init__(self, vocab=64, dim=32, depth=4, heads=4):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, dim)
        self.layers = nn.ModuleList([BertLayer(dim, heads) for _ in range(depth)])
        self.pooler = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask, token_type_ids):
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        h = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            h = layer(h, ext)
        return h, torch.tanh(self.pooler(h[:, 0]))


def bert():
    g = _seed(2)

    def inputs():
        ids = torch.randint(0, 64, (2, 12), generator=g)
        mask = torch.ones(2, 12, dtype=torch.long)
        mask[1, int(torch.randint(4, 11, (1,), generator=g)):] = 0
        types = torch.randint(0, 2, (2, 12), generator=g)
        return ids, mask, types
    return Bert().eval(), inputs(), inputs()


# ---- T5: encoder-decoder, cross-attention, relative position bias ------------

class T5LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, h):
        var = h.pow(2).mean(-1, keepdim=True)
        return self.weight * (h * torch.rsqrt(var + self.eps))


class T5Attention(nn.Module):
    def __init__(self, dim, heads, bias=False, bidirectional=True, buckets=8, max_distance=16):
        super().__init__()
        self.heads, self.d = heads, dim // heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.bidirectional, self.buckets, self.max_distance = bidirectional, buckets, max_distance
        self.rel_bias = nn.Embedding(buckets, heads) if bias else None

    def bucket(self, rel):
        n = self.buckets
        ret = 0
        if self.bidirectional:
            n //= 2
            ret = (rel > 0).to(torch.long) * n
            rel = torch.abs(rel)
        else:
            rel = -torch.min(rel, torch.zeros_like(rel))
        exact = n // 2
        small = rel < exact
        large = exact + (torch.log(rel.float() / exact) / math.log(self.max_distance / exact)
                         * (n - exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, n - 1))
        return ret + torch.where(small, rel, large)

    def position_bias(self, q_len, k_len):
        dev = self.rel_bias.weight.device
        ctx = torch.arange(q_len, dtype=torch.long, device=dev)[:, None]
        mem = torch.arange(k_len, dtype=torch.long, device=dev)[None, :]
        values = self.rel_bias(self.bucket(mem - ctx))
        return values.permute([2, 0, 1]).unsqueeze(0)

    def shape(self, x):
        return x.view(x.size(0), -1, self.heads, self.d).transpose(1, 2)

    def forward(self, h, kv=None, bias=None, mask=None):
        kv = h if kv is None else kv
        q, k, v = self.shape(self.q(h)), self.shape(self.k(kv)), self.shape(self.v(kv))
        scores = torch.matmul(q, k.transpose(3, 2))
        if bias is None:
            bias = self.position_bias(h.size(1), kv.size(1))
            if mask is not None:
                bias = bias + mask
        attn = F.softmax(scores + bias, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).contiguous().view(h.size(0), -1,
                                                                      self.heads * self.d)
        return self.o(out), bias


class T5Block(nn.Module):
    def __init__(self, dim, heads, decoder, first):
        super().__init__()
        self.norm1 = T5LayerNorm(dim)
        self.self_attn = T5Attention(dim, heads, bias=first, bidirectional=not decoder)
        self.decoder = decoder
        if decoder:
            self.norm2 = T5LayerNorm(dim)
            self.cross = T5Attention(dim, heads)
        self.norm3 = T5LayerNorm(dim)
        self.wi = nn.Linear(dim, dim * 2, bias=False)
        self.wo = nn.Linear(dim * 2, dim, bias=False)

    def forward(self, h, bias, mask, enc=None, enc_bias=None):
        a, bias = self.self_attn(self.norm1(h), bias=bias, mask=mask)
        h = h + a
        if self.decoder:
            c, enc_bias = self.cross(self.norm2(h), kv=enc, bias=enc_bias)
            h = h + c
        h = h + self.wo(F.relu(self.wi(self.norm3(h))))
        return h, bias, enc_bias


class T5(nn.Module):
    def __init__(self, vocab=48, dim=32, heads=4, depth=2):
        super().__init__()
        self.shared = nn.Embedding(vocab, dim)
        self.encoder = nn.ModuleList([T5Block(dim, heads, False, i == 0) for i in range(depth)])
        self.decoder = nn.ModuleList([T5Block(dim, heads, True, i == 0) for i in range(depth)])
        self.enc_norm = T5LayerNorm(dim)
        self.dec_norm = T5LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, decoder_input_ids):
        h, bias = self.shared(input_ids), None
        for blk in self.encoder:
            h, bias, _ = blk(h, bias, None)
        enc = self.enc_norm(h)
        T = decoder_input_ids.size(1)
        causal = torch.triu(torch.full((T, T), float("-inf"), device=enc.device), diagonal=1)
        d, bias, enc_bias = self.shared(decoder_input_ids), None, torch.zeros(1, device=enc.device)
        for blk in self.decoder:
            d, bias, enc_bias = blk(d, bias, causal, enc, enc_bias)
        return self.lm_head(self.dec_norm(d) * (32 ** -0.5))


def t5():
    g = _seed(3)

    def inputs():
        return torch.randint(0, 48, (2, 10), generator=g), torch.randint(0, 48, (2, 6), generator=g)
    return T5().eval(), inputs(), inputs()


# ---- torch's own layers ------------------------------------------------------------

class TorchEncoder(nn.Module):
    def __init__(self, dim=32, heads=4, depth=6):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True)
            for _ in range(depth)])
        self.head = nn.Linear(dim, 8)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def torch_encoder_layer():
    g = _seed(4)
    return TorchEncoder().eval(), (torch.randn(2, 10, 32, generator=g),), \
        (torch.randn(2, 10, 32, generator=g),)


class TorchMHA(nn.Module):
    def __init__(self, dim=32, heads=4, depth=4):
        super().__init__()
        self.attn = nn.ModuleList([nn.MultiheadAttention(dim, heads, batch_first=True)
                                   for _ in range(depth)])
        self.norms = nn.ModuleList([nn.LayerNorm(dim) for _ in range(depth)])

    def forward(self, x, memory):
        for attn, norm in zip(self.attn, self.norms):
            out, weights = attn(norm(x), memory, memory)
            x = x + out
        return x, weights


def torch_mha():
    g = _seed(5)

    def inputs():
        return torch.randn(2, 8, 32, generator=g), torch.randn(2, 12, 32, generator=g)
    return TorchMHA().eval(), inputs(), inputs()


MODELS = {"vit": vit, "bert": bert, "t5": t5, "torch_encoder_layer": torch_encoder_layer,
          "torch_mha": torch_mha}
