# A small PyTorch training step for tests/device/cuda.sh: its kernel count under torch.profiler, and its time
# plain and profiled; under `hubprof trace --region step` hubprof records the same step (the NVTX range
# "step"). usage: torch_step.py [--profile]   prints "key value" lines.
# SPDX-License-Identifier: MIT
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
torch.cuda.nvtx.range_push("step")  # the one step hubprof's --region step selects
t0 = time.perf_counter()
loss = step()
torch.cuda.synchronize()
print("step_ms %.3f" % ((time.perf_counter() - t0) * 1e3))
torch.cuda.nvtx.range_pop()
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
