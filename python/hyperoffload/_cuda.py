# SPDX-License-Identifier: LGPL-2.1-or-later
"""``offload(..., device="cuda")``: the runner on a CUDA device.

The arena is one torch CUDA tensor and every tensor a view over it; the
pool stays host memory, pinned by libhyper (cudaHostRegister), and its
copies run on libhyper's own CUDA streams.  Operators run on torch's
current stream, which libhyper makes wait for their prefetches on the GPU
(hyper_set_compute_stream, hyper_wait_tensor_stream): no host
synchronisation per operator.  The measured peak is
``torch.cuda.max_memory_allocated()`` over the call.

Not run on a GPU yet: see Documentation/pytorch.md.
"""
from __future__ import annotations

import time
from typing import Any, List, Optional, Tuple

import torch

from .binding import Buffer, Context, CudaUnavailable, Schedule
from .capture import Captured
from .runner import Runner


def cuda_ordinal(device: str) -> Optional[int]:
    """None for "cpu"; the ordinal for "cuda" / "cuda:N" (the current
    device for "cuda"); ValueError for anything else.  Needs no GPU."""
    if device == "cpu":
        return None
    if device == "cuda":
        return -1
    if device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    raise ValueError(f"device {device!r}: use 'cpu', 'cuda' or 'cuda:N'")


def check_cuda(device: str) -> torch.device:
    """The torch device for ``device``, or CudaUnavailable saying why not."""
    n = cuda_ordinal(device)
    if n is None:
        raise ValueError("check_cuda() is for a CUDA device")
    if not torch.cuda.is_available():
        raise CudaUnavailable(
            f"device={device!r}: this torch ({torch.__version__}) has no CUDA device "
            f"(torch.cuda.is_available() is False); use device='cpu'")
    if n < 0:
        n = torch.cuda.current_device()
    if n >= torch.cuda.device_count():
        raise CudaUnavailable(f"device={device!r}: torch sees {torch.cuda.device_count()} "
                              f"CUDA device(s)")
    return torch.device("cuda", n)


class _Arena:
    """The arena: one torch CUDA tensor (what DeviceMemory is on the host)."""

    def __init__(self, nbytes: int, dev: torch.device):
        self.nbytes = max(4096, (nbytes + 4095) & ~4095)
        self.tensor: Optional[torch.Tensor] = torch.empty(self.nbytes, dtype=torch.uint8,
                                                          device=dev)
        self.address = self.tensor.data_ptr()

    def close(self) -> None:
        self.tensor = None


class _CudaContext(Context):
    """Waits before an operator are stream waits on torch's current stream."""

    def wait_tensor(self, tensor: int) -> None:
        self.wait_tensor_stream(tensor, torch.cuda.current_stream().cuda_stream)

    def wait_tensor_host(self, tensor: int) -> None:
        super().wait_tensor(tensor)


class CudaRunner(Runner):
    """Runner with the arena in GPU memory of ``dev``."""

    def __init__(self, cap: Captured, schedule: Schedule, dev: torch.device,
                 baseline_peak: int = 0, pool_bytes: int = 0):
        self.dev = dev
        super().__init__(cap, schedule, "shmem", baseline_peak=baseline_peak,
                         pool_bytes=pool_bytes)

    def _open(self, backend: str, pool_bytes: int) -> Context:
        # Only the shmem pool can be pinned (hyper_open(3)).
        return _CudaContext("shmem", pool_bytes=pool_bytes, cuda_device=self.dev.index)

    def _device_memory(self, arena: int, bufs: List[Buffer]) -> None:
        for b in bufs:
            if not (isinstance(b.owner, torch.Tensor) and b.owner.device == self.dev):
                raise ValueError(f"a weight the schedule keeps on the device is on "
                                 f"{getattr(b.owner, 'device', '?')}, not {self.dev}: "
                                 f"move the module there first (module.to({str(self.dev)!r}))")
        self.mem = _Arena(arena, self.dev)   # type: ignore[assignment]
        self.ctx.set_arena_at(self.mem.address, self.mem.nbytes)

    def _arena_tensor(self) -> torch.Tensor:
        return self.mem.tensor               # type: ignore[union-attr]

    def _final_tensor(self, tid: str) -> torch.Tensor:
        i = self.index[tid]
        if self.ctx.tensor_ptr(i):
            return self._device_tensor(tid)
        self.ctx.wait_tensor_host(i)         # type: ignore[attr-defined]
        return self._pool_tensor(tid).to(self.dev)

    def __call__(self, *inputs: Any) -> Any:
        with torch.cuda.device(self.dev):
            stream = torch.cuda.current_stream()
            self.ctx.set_compute_stream(stream.cuda_stream)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter_ns()
            out = super().__call__(*inputs)
            torch.cuda.synchronize()
            wall = time.perf_counter_ns() - t0
            self.stats["wall_ns"] = wall
            self.stats["libhyper_peak_device_bytes"] = self.stats["peak_device_bytes"]
            self.stats["peak_device_bytes"] = torch.cuda.max_memory_allocated()
        return out


def runner(cap: Captured, schedule: Schedule, device: str, baseline_peak: int = 0,
           pool_bytes: int = 0) -> Tuple[CudaRunner, torch.device]:
    dev = check_cuda(device)
    return CudaRunner(cap, schedule, dev, baseline_peak, pool_bytes), dev
