# SPDX-License-Identifier: LGPL-2.1-or-later
"""Constructs of the zoo: dict and tuple outputs, in-place operators,
aliasing, buffers written in forward, setitem, shapes and sizes used in
factories and slices; and the models that must be refused."""
from collections import namedtuple

import torch
from torch import nn
from torch.nn import functional as F


def _gen(n: int) -> torch.Generator:
    torch.manual_seed(n)
    return torch.Generator().manual_seed(n + 1000)


def _x(g, *shape):
    return (torch.randn(*shape, generator=g),)


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 48), nn.Tanh(),
                                 *[m for _ in range(4) for m in (nn.Linear(48, 48), nn.Tanh())])
        self.cls = nn.Linear(48, 5)
        self.reg = nn.Linear(48, 2)

    def forward(self, x):
        h = self.enc(x)
        return {"logits": self.cls(h), "box": self.reg(h), "hidden": h}


def dict_out():
    g = _gen(31)
    return DictOut().eval(), _x(g, 4, 16), _x(g, 4, 16)


Pair = namedtuple("Pair", ["scores", "features"])


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 64)
        self.b = nn.ModuleList([nn.Linear(64, 64) for _ in range(4)])
        self.c = nn.Linear(64, 3)

    def forward(self, x):
        f = F.gelu(self.a(x))
        for b in self.b:
            f = F.gelu(b(f))
        top = torch.topk(self.c(f), 2, dim=-1)
        return (top.values, top.indices), Pair(self.c(f).softmax(-1), f)


def tuple_out():
    g = _gen(32)
    return TupleOut().eval(), _x(g, 6, 12), _x(g, 6, 12)


class LeakyInplace(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 48)
        self.act = nn.LeakyReLU(0.2, inplace=True)
        self.l2 = nn.ModuleList([nn.Linear(48, 48) for _ in range(4)])
        self.l3 = nn.Linear(48, 8)

    def forward(self, x):
        h = self.act(self.l1(x))
        g = h
        for lin in self.l2:
            g = self.act(lin(g))
        return self.l3(g + h), h


def leaky_inplace():
    g = _gen(33)
    return LeakyInplace().eval(), _x(g, 5, 16), _x(g, 5, 16)


class Aliasing(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(48, 48)
        self.b = nn.Linear(48, 48)
        self.c = nn.Sequential(nn.Linear(48, 48), nn.ReLU(), nn.Linear(48, 48))

    def forward(self, x):
        h = self.a(x)
        keep = h
        y = self.b(x)
        h += y
        v = h.view(-1)
        v.mul_(0.5)
        t = h.t()
        t.sub_(1.0)
        return keep * 2 + self.c(h)


def aliasing():
    g = _gen(34)
    return Aliasing().eval(), _x(g, 4, 48), _x(g, 4, 48)


class BufferUpdate(nn.Module):
    """A step counter and a running mean, written in forward."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(8, 48)
        self.mid = nn.ModuleList([nn.Linear(48, 48) for _ in range(3)])
        self.l2 = nn.Linear(48, 8)
        self.register_buffer("step", torch.zeros((), dtype=torch.long))
        self.register_buffer("mean", torch.zeros(48))

    def forward(self, x):
        self.step.add_(1)
        h = torch.relu(self.l1(x))
        self.mean.mul_(0.9).add_(h.mean(0), alpha=0.1)
        h = h - self.mean
        for lin in self.mid:
            h = torch.relu(lin(h))
        return self.l2(h) * self.step


def buffer_update():
    g = _gen(35)
    return BufferUpdate(), _x(g, 4, 8), _x(g, 4, 8)


class SetItem(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 48)
        self.mid = nn.ModuleList([nn.Linear(48, 48) for _ in range(3)])
        self.b = nn.Linear(48, 6)

    def forward(self, x):
        z = self.a(x)
        z[:, :4] = 0
        z[0] = z[0] * 3
        for lin in self.mid:
            z = torch.tanh(lin(z))
        return self.b(z)


def setitem():
    g = _gen(36)
    return SetItem().eval(), _x(g, 3, 12), _x(g, 3, 12)


class Sizes(nn.Module):
    """Shape unpacking, split unpacking and traced sizes in factories and slices."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 96)
        self.out = nn.ModuleList([nn.Linear(32, 32) for _ in range(6)])
        self.register_buffer("table", torch.randn(32, 32))

    def forward(self, x):
        B, S, C = x.shape
        q, k, v = self.proj(x).split(C, dim=-1)
        pos = torch.arange(S, device=x.device)
        bias = torch.zeros(B, S, C, device=x.device) + self.table[:S] + pos[None, :, None]
        att = torch.softmax(q @ k.transpose(1, 2), -1) @ v
        h = att + bias
        for lin in self.out:
            h = F.relu(lin(h))
        return h


def sizes():
    g = _gen(37)
    return Sizes().eval(), _x(g, 2, 7, 32), _x(g, 2, 7, 32)


class Mlp(nn.Module):
    def __init__(self, dim=64, depth=6):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for lin in self.layers:
            x = x + F.silu(lin(self.norm(x)))
        return x


def mlp():
    g = _gen(38)
    return Mlp().eval(), _x(g, 8, 64), _x(g, 8, 64)


MODELS = {"dict_out": dict_out, "tuple_out": tuple_out, "leaky_inplace": leaky_inplace,
          "aliasing": aliasing, "buffer_update": buffer_update, "setitem": setitem,
          "sizes": sizes, "mlp": mlp}


# ---- refused ---------------------------------------------------------------------

class ValueBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        if h.sum() > 0:
            return h * 2
        return h


class DataShape(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        return h[h > 0].sum() + h[h > 0]


def value_branch():
    g = _gen(41)
    return ValueBranch().eval(), _x(g, 2, 8), _x(g, 2, 8)


def data_shape():
    g = _gen(42)
    return DataShape().eval(), _x(g, 2, 8), _x(g, 2, 8)


# name -> (factory, exception type name in hyperoffload.torch, regex the message matches)
REFUSED = {
    "value_branch": (value_branch, "CaptureError", r"control flow"),
    "data_shape": (data_shape, "CaptureError", r"depends on the data|data-dependent|"
                   r"shape depends"),
}
