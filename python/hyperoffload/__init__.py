# SPDX-License-Identifier: LGPL-2.1-or-later
"""hyperoffload: PyTorch and ONNX models in, tensors in libhyper's arena.

``hyperoffload.binding`` is libhyper's binding (standard library only);
``hyperoffload.torch`` captures, plans and runs PyTorch modules;
``hyperoffload.onnx`` imports ONNX graphs.  See Documentation/pytorch.md.
"""
from .binding import CudaUnavailable, HyperError, LibraryNotFound

__version__ = "1.0.0"
__all__ = ["CudaUnavailable", "HyperError", "LibraryNotFound", "__version__"]
