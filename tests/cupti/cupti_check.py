#!/usr/bin/env python3
"""Independent check of CUPTI's Profiler Host API through ctypes (no hubprof code): the pass count of a metric
list as one configuration, or the metric names of a chip. usage: cupti_check.py LIB CHIP passes M1,M2,...
| LIB CHIP names TYPE | LIB - chips"""
# SPDX-License-Identifier: MIT
import ctypes as C
import os
import sys

# libcupti opens libnvperf_host.so by bare name: the one beside it, loaded first, answers that name
host = os.path.join(os.path.dirname(sys.argv[1]), "libnvperf_host.so")
if os.path.exists(host):
    C.CDLL(host, mode=C.RTLD_GLOBAL)
lib = C.CDLL(sys.argv[1])
chip = sys.argv[2].encode()
what = sys.argv[3]
SZ = C.c_size_t
P = C.c_void_p


def params(*fields):
    """A parameter struct: structSize and pPriv first, then the call's own fields."""
    class S(C.Structure):
        _fields_ = [("structSize", SZ), ("pPriv", P)] + list(fields)
    return S


def call(fn, s):
    s.structSize = getattr(type(s), list(f[0] for f in type(s)._fields_)[-1]).offset + C.sizeof(
        type(s)._fields_[-1][1])
    rc = getattr(lib, fn)(C.byref(s))
    if rc:
        raise SystemExit(f"{fn}: CUPTI error {rc}")


Chips = params(("numChips", SZ), ("ppChipNames", C.POINTER(C.c_char_p)))
Init = params(("profilerType", C.c_int), ("pChipName", C.c_char_p), ("pAvail", P), ("pHost", P))
Deinit = params(("pHost", P))
Base = params(("pHost", P), ("metricType", C.c_int), ("ppNames", C.POINTER(C.c_char_p)), ("num", SZ))
Add = params(("pHost", P), ("ppNames", C.POINTER(C.c_char_p)), ("num", SZ))
ImgSize = params(("pHost", P), ("size", SZ))
Img = params(("pHost", P), ("size", SZ), ("pImage", P))
Passes = params(("size", SZ), ("pImage", P), ("passes", SZ))

if what == "chips":
    c = Chips()
    call("cuptiProfilerHostGetSupportedChips", c)
    print("\n".join(c.ppChipNames[i].decode() for i in range(c.numChips)))
    sys.exit(0)
ini = Init(profilerType=0, pChipName=chip)
call("cuptiProfilerHostInitialize", ini)
host = ini.pHost
if what == "names":
    b = Base(pHost=host, metricType=int(sys.argv[4]))
    call("cuptiProfilerHostGetBaseMetrics", b)
    print("\n".join(b.ppNames[i].decode() for i in range(b.num)))
elif what == "passes":
    names = [n.strip().encode() for n in sys.argv[4].split(",") if n.strip()]
    arr = (C.c_char_p * len(names))(*names)
    call("cuptiProfilerHostConfigAddMetrics", Add(pHost=host, ppNames=arr, num=len(names)))
    sz = ImgSize(pHost=host)
    call("cuptiProfilerHostGetConfigImageSize", sz)
    buf = (C.c_uint8 * sz.size)()
    call("cuptiProfilerHostGetConfigImage", Img(pHost=host, size=sz.size, pImage=C.cast(buf, P)))
    p = Passes(size=sz.size, pImage=C.cast(buf, P))
    call("cuptiProfilerHostGetNumOfPasses", p)
    print(p.passes)
call("cuptiProfilerHostDeinitialize", Deinit(pHost=host))
