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
