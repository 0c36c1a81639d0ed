# SPDX-License-Identifier: LGPL-2.1-or-later
"""Recurrent language models of the zoo: nn.LSTM, nn.GRUCell, a GRU
written by hand (chunk unpacking), nn.EmbeddingBag."""
import torch
from torch import nn


def _gen(n: int) -> torch.Generator:
    torch.manual_seed(n)
    return torch.Generator().manual_seed(n + 1000)


class LSTMLM(nn.Module):
    def __init__(self, vocab=64, dim=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.lstm2 = nn.LSTM(hidden, hidden, batch_first=True)
        self.lstm3 = nn.LSTM(hidden, hidden, batch_first=True)
        self.lstm4 = nn.LSTM(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids):
        out, _ = self.lstm(self.embed(ids))
        out, _ = self.lstm2(out)
        out, _ = self.lstm3(out)
        out, (h, c) = self.lstm4(out)
        return self.head(out), h, c


def lstm_lm():
    g = _gen(21)
    return LSTMLM().eval(), (torch.randint(0, 64, (2, 8), generator=g),), \
        (torch.randint(0, 64, (2, 8), generator=g),)


class GRUCellLM(nn.Module):
    def __init__(self, vocab=64, dim=16, hidden=32, steps=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cells = nn.ModuleList([nn.GRUCell(dim, hidden), nn.GRUCell(hidden, hidden),
                                    nn.GRUCell(hidden, hidden)])
        self.head = nn.Linear(hidden, vocab)
        self.steps = steps

    def forward(self, ids):
        x = self.embed(ids)
        hs = [torch.zeros(ids.size(0), c.hidden_size, device=x.device) for c in self.cells]
        logits = []
        for t in range(self.steps):
            inp = x[:, t]
            for i, cell in enumerate(self.cells):
                hs[i] = cell(inp, hs[i])
                inp = hs[i]
            logits.append(self.head(inp))
        return torch.stack(logits, 1)


def grucell_lm():
    g = _gen(22)
    return GRUCellLM().eval(), (torch.randint(0, 64, (2, 6), generator=g),), \
        (torch.randint(0, 64, (2, 6), generator=g),)


class HandGRULM(nn.Module):
    """A GRU cell written out: one matmul per gate group, then chunk(3)."""

    def __init__(self, vocab=96, dim=16, hidden=32, steps=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.w_ih = nn.Linear(dim, 3 * hidden)
        self.w_hh = nn.Linear(hidden, 3 * hidden)
        self.head = nn.Linear(hidden, vocab)
        self.hidden, self.steps = hidden, steps

    def forward(self, ids):
        x = self.embed(ids)
        B = ids.shape[0]
        h = x.new_zeros(B, self.hidden)
        outs = []
        for t in range(self.steps):
            r_i, z_i, n_i = self.w_ih(x[:, t]).chunk(3, dim=-1)
            r_h, z_h, n_h = self.w_hh(h).chunk(3, dim=-1)
            r = torch.sigmoid(r_i + r_h)
            z = torch.sigmoid(z_i + z_h)
            n = torch.tanh(n_i + r * n_h)
            h = (1 - z) * n + z * h
            outs.append(self.head(h))
        return torch.stack(outs, dim=1)


def hand_gru_lm():
    g = _gen(23)
    return HandGRULM().eval(), (torch.randint(0, 96, (3, 5), generator=g),), \
        (torch.randint(0, 96, (3, 5), generator=g),)


class BagModel(nn.Module):
    def __init__(self, vocab=64, dim=16, classes=4):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(),
                                 *[m for _ in range(4) for m in (nn.Linear(32, 32), nn.ReLU())],
                                 nn.Linear(32, classes))

    def forward(self, ids, offsets):
        return self.mlp(self.bag(ids, offsets))


def embedding_bag():
    g = _gen(24)

    def inputs():
        return torch.randint(0, 64, (20,), generator=g), torch.tensor([0, 3, 9, 14])
    return BagModel().eval(), inputs(), inputs()


MODELS = {"lstm_lm": lstm_lm, "grucell_lm": grucell_lm, "hand_gru_lm": hand_gru_lm,
          "embedding_bag": embedding_bag}
