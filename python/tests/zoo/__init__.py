# SPDX-License-Identifier: LGPL-2.1-or-later
"""The model zoo: small models written the way people write them.

``ZOO`` maps a name to a factory returning ``(module, inputs, other)``:
the module (seeded weights), the example inputs it is planned on, and
other inputs of the same shapes.  ``REFUSED`` maps a name to a factory
of a model that must be refused at capture, with the exception type and
the start of its one-line message.  test_zoo.py checks each at budget
ratios 1.0, 0.7 and 0.5; bench_torch.py times them.
"""
from typing import Any, Callable, Dict, Tuple

import torch

from . import cnn, misc, rnn, transformer

Factory = Callable[[], Tuple[torch.nn.Module, Tuple[Any, ...], Tuple[Any, ...]]]

ZOO: Dict[str, Factory] = {}
for _mod in (transformer, cnn, rnn, misc):
    for _name, _fn in _mod.MODELS.items():
        assert _name not in ZOO, _name
        ZOO[_name] = _fn

REFUSED: Dict[str, Tuple[Factory, type, str]] = dict(misc.REFUSED)


def _large_mlp():
    g = torch.Generator().manual_seed(101)
    torch.manual_seed(100)
    return misc.Mlp(dim=1024, depth=6).eval(), (torch.randn(128, 1024, generator=g),), \
        (torch.randn(128, 1024, generator=g),)


def _large_vit():
    g = torch.Generator().manual_seed(103)
    torch.manual_seed(102)
    m = transformer.ViT(image=64, patch=8, dim=256, depth=4, heads=8).eval()
    return m, (torch.randn(8, 3, 64, 64, generator=g),), (torch.randn(8, 3, 64, 64, generator=g),)


def _large_resnet():
    g = torch.Generator().manual_seed(105)
    torch.manual_seed(104)
    m = cnn.ResNet()
    m.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, 1, 1, bias=False),
                                 torch.nn.BatchNorm2d(64), torch.nn.ReLU(inplace=True))
    m.layers = torch.nn.Sequential(cnn.BasicBlock(64, 64, 1), cnn.BasicBlock(64, 64, 1),
                                   cnn.BasicBlock(64, 128, 2))
    m.fc = torch.nn.Linear(128, 10)
    m = cnn._randomize_bn(m, g).eval()
    return m, (torch.randn(4, 3, 32, 32, generator=g),), (torch.randn(4, 3, 32, 32, generator=g),)


# Larger variants for make bench-torch, whose operators take about a
# millisecond or more on one CPU thread (the runner's overhead target).
LARGE: Dict[str, Factory] = {"mlp-large": _large_mlp, "vit-large": _large_vit,
                             "resnet-large": _large_resnet}
