# A small PyTorch training step for tests/device/cuda.sh: its kernel count under torch.profiler, and its time
# plain and profiled; under `hubprof trace --start-paused` with --one-step, hubprof records that same step
# (hubprof_start/hubprof_stop around it). usage: torch_step.py [--profile] [--one-step]   prints "key value" lines.
# SPDX-License-Identifier: MIT
import ctypes
import os
import statistics
import sys
import time

import torch

torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 1024, device=dev)
y = torch.randn(256, 1024, device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


for _ in range(5):  # warm-up: cuBLAS handles, allocator
    step()
torch.cuda.synchronize()


def timed(n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


print("plain_ms %.3f" % timed(20))
# the one step `hubprof trace --start-paused` records: collection on around it, on every thread (autograd's
# backward launches from its own thread, so an NVTX range of this thread would not cover it)
hub = None
if os.environ.get("HUBPROF_INJECTION_PATH") and "--one-step" in sys.argv:
    hub = ctypes.CDLL(os.environ["HUBPROF_INJECTION_PATH"])
    hub.hubprof_start()
torch.cuda.nvtx.range_push("step")
t0 = time.perf_counter()
loss = step()
torch.cuda.synchronize()
print("step_ms %.3f" % ((time.perf_counter() - t0) * 1e3))
torch.cuda.nvtx.range_pop()
if hub:
    hub.hubprof_stop()
if "--profile" in sys.argv:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and "Memcpy" not in e.name and "Memset" not in e.name]
    print("torch_kernels %d" % len(kernels))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        print("profiled_ms %.3f" % timed(20))
print("loss %.6f" % loss.item())
