# The collector: build/libhubprof_collector.so (OpenCL ICD layer + LD_PRELOAD shim over the hub's log-only
# subset, never SQLite), a no-op build of it as the overhead floor, the OpenCL examples and their test.
# Included from the main Makefile (uses B, CSTD, CFLAGS, CPPFLAGS and $(B)/libhubprof_log.a from there).
# SPDX-License-Identifier: MIT

COLL_SRC := $(wildcard src/collector/*.c)
# The counter providers and the planner come along for kernel replay through their own archive
# (libhubprof_counters.a: never SQLite), linked before the hub's log subset; --exclude-libs,ALL keeps every
# archive member's symbols inside the collector, so it stays self-contained and exports what it did.
COLL_ARCHIVES := $(B)/libhubprof_counters.a $(B)/libhubprof_log.a
COLL_HDR := $(wildcard src/collector/*.h) include/hubprof/hub.h src/hub/hub_internal.h src/hub/hub_layer.h src/hub/fmt_log.h \
            $(wildcard src/counters/*.h)
# BENCH_SPIN=N: the deliberately slowed collector of `make bench-check SPIN=N` (N pause instructions per
# dispatch, src/collector/prov_opencl.c), built by bench/bench_check.sh into its own build folder; never set
# otherwise.
COLL_FLAGS := -fvisibility=hidden -Isrc/collector $(INC_HUB) $(INC_COUNTERS) \
              $(if $(BENCH_SPIN),-DHUBPROF_BENCH_SPIN=$(BENCH_SPIN))
COLL_LDFLAGS := -shared -Wl,--exclude-libs,ALL -Wl,-soname,libhubprof_collector.so -Wl,-z,defs \
                -Wl,-z,nodelete
COLL_LIBS := -ldl -lpthread
# The NVTX v3 headers of an installed CUDA toolkit (header-only, nothing linked); without them the NVTX
# example is not built and its test says it is skipped.
NVTX_INC ?= $(patsubst %/nvtx3/nvToolsExt.h,%,$(firstword $(wildcard /usr/local/cuda/include/nvtx3/nvToolsExt.h \
              /usr/local/cuda-*/include/nvtx3/nvToolsExt.h /usr/include/nvtx3/nvToolsExt.h)))
OCL_EXAMPLES := $(patsubst examples/ocl/%.c,$(B)/examples/ocl/%,$(wildcard examples/ocl/*.c)) \
                $(patsubst examples/ocl/%.cpp,$(B)/examples/ocl/%,$(wildcard examples/ocl/*.cpp))
ifeq ($(NVTX_INC),)
OCL_EXAMPLES := $(filter-out $(B)/examples/ocl/nvtx_ranges,$(OCL_EXAMPLES))
endif

$(B)/libhubprof_collector.so: $(COLL_SRC) $(COLL_HDR) $(COLL_ARCHIVES)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(COLL_FLAGS) $(COLL_LDFLAGS) -o $@ $(COLL_SRC) $(COLL_ARCHIVES) $(COLL_LIBS)

# The exit shim (shim/exit_shim.c): preloaded by hubprof beside the layer, it tells the collector how the
# process ends. libc and libdl only.
$(B)/libhubprof_exit.so: src/collector/shim/exit_shim.c
	$(CC) $(CSTD) $(CFLAGS) -fvisibility=hidden -shared -Wl,-soname,libhubprof_exit.so -Wl,-z,defs -o $@ $< -ldl \
	  -lpthread

# The same library with every wrapper forwarding only: the floor of the overhead benchmark.
$(B)/libhubprof_collector_noop.so: $(COLL_SRC) $(COLL_HDR) $(COLL_ARCHIVES)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(COLL_FLAGS) -DHUBPROF_COLLECTOR_NOOP $(COLL_LDFLAGS) -o $@ $(COLL_SRC) \
	  $(COLL_ARCHIVES) $(COLL_LIBS)

$(filter-out $(B)/examples/ocl/dlopen_ocl $(B)/examples/ocl/nvtx_ranges $(B)/examples/ocl/regions_cxx,\
  $(OCL_EXAMPLES)): $(B)/examples/ocl/%: examples/ocl/%.c \
  $(wildcard examples/ocl/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) -Iinclude $< -o $@ -lOpenCL -lpthread
# C++ through include/hubprof/api.h; NVTX through the toolkit's headers (-isystem: their warnings are not ours).
$(B)/examples/ocl/regions_cxx: examples/ocl/regions_cxx.cpp include/hubprof/api.h
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra $(CFLAGS) -Iinclude $< -o $@ -lOpenCL -lpthread
$(B)/examples/ocl/nvtx_ranges: examples/ocl/nvtx_ranges.c $(wildcard examples/ocl/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) -isystem $(NVTX_INC) $< -o $@ -lOpenCL -lpthread -ldl
# The region benchmark: api.h only, plus NVTX push/pop when the headers are there.
$(B)/bench/bench_regions: bench/bench_regions.c include/hubprof/api.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g -Iinclude $(if $(NVTX_INC),-DHAVE_NVTX -isystem $(NVTX_INC)) $< -o $@ -ldl
# dlopen_ocl loads libOpenCL itself: never linked with it.
$(B)/examples/ocl/dlopen_ocl: examples/ocl/dlopen_ocl.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $< -o $@ -ldl

# Checker of the collector's logs (reads them through the hub, log format only).
$(B)/tests/collector/check_logs: tests/collector/check_logs.c $(B)/libhubprof_log.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $< $(B)/libhubprof_log.a -o $@ -lpthread

# Checker of profile stores (kernel and application replay; any format, so the full hub).
$(B)/tests/replay/check_profile: tests/replay/check_profile.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)

# Dependency files of the collector's own sources, which are compiled in one command (where -MD cannot name
# one file per source): what tests/check_deps.sh reads for the collector, system headers included.
COLL_DEPS := $(patsubst %.c,$(B)/deps/%.d,$(wildcard src/collector/*.c))
$(B)/deps/src/collector/%.d: src/collector/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CPPFLAGS) $(COLL_FLAGS) -M -MP -MT $@ -MF $@ $<

.PHONY: collector collector-test replay-test
collector: $(B)/libhubprof_collector.so $(B)/libhubprof_collector_noop.so $(B)/libhubprof_exit.so $(OCL_EXAMPLES) \
           $(B)/tests/collector/check_logs $(B)/tests/replay/check_profile $(COLL_DEPS)
collector-test: collector
	bash tests/collector/test_collector.sh
replay-test: collector $(B)/hubprof
	bash tests/replay/test_replay.sh

# ---- CUDA (prov_cuda*.c, tests/cuda/, docs/cuda.md) ----
# The toolkit where present: CUPTI's headers for the layout check of the record conversion's test, nvcc for
# the CUDA test program. Neither is needed to build the collector (CUPTI is loaded at run time); without
# them the test checks the conversion alone and tests/cuda/test_cuda.sh says what it skipped.
CUDA_HOME_DIR ?= $(patsubst %/include/cupti_activity.h,%,$(firstword $(wildcard \
                   /usr/local/cuda/include/cupti_activity.h /usr/local/cuda-*/include/cupti_activity.h)))
# (an nvcc that runs: a wrapper left on PATH by a toolkit that is gone does not count)
NVCC ?= $(firstword $(shell nvcc --version >/dev/null 2>&1 && command -v nvcc) $(wildcard $(CUDA_HOME_DIR)/bin/nvcc))
# sm_90 (H100, H200) code plus its PTX, which the driver compiles for newer GPUs
NVCC_ARCH ?= -gencode arch=compute_90,code=[sm_90,compute_90]
$(B)/tests/cuda/test_cuda_conv: tests/cuda/test_cuda_conv.c src/collector/prov_cuda_conv.c src/collector/prov_cuda.h \
  tests/check.h $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(INC_TESTS) -Isrc/collector \
	  $(if $(CUDA_HOME_DIR),-DHAVE_CUPTI_H -isystem $(CUDA_HOME_DIR)/include) $< src/collector/prov_cuda_conv.c \
	  $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)
$(SAN)/tests/cuda/test_cuda_conv: tests/cuda/test_cuda_conv.c src/collector/prov_cuda_conv.c src/collector/prov_cuda.h \
  tests/check.h $(call obj,$(SAN),$(HUB_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  $(CPPFLAGS) $(INC_TESTS) -Isrc/collector $(if $(CUDA_HOME_DIR),-DHAVE_CUPTI_H -isystem $(CUDA_HOME_DIR)/include) \
	  $< src/collector/prov_cuda_conv.c $(call obj,$(SAN),$(HUB_SRC)) -o $@ $(LDLIBS_HUB)
$(B)/tests/cuda/cuda_app: tests/cuda/cuda_app.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(NVCC_ARCH) $< -o $@ -ldl
# the driver's injection done by hand, then OpenCL work (no GPU needed)
$(B)/tests/cuda/inject_ocl: tests/cuda/inject_ocl.c $(wildcard examples/ocl/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $< -o $@ -lOpenCL -ldl
$(B)/tests/cuda/launch_loop: tests/cuda/launch_loop.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(NVCC_ARCH) $< -o $@
$(B)/tests/cuda/stream_copy: tests/cuda/stream_copy.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(NVCC_ARCH) $< -o $@
# counter values per kernel and counter (tests/device/cuda.sh: hubprof's CUDA counters beside ncu's)
$(B)/tests/cuda/counter_table: tests/cuda/counter_table.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)
# what a store holds, summed (the checks of test_cuda.sh and tests/device/cuda.sh)
$(B)/tests/cuda/count_store: tests/cuda/count_store.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)
# hubprof roofline's CUDA micro-benchmarks (src/cli/roofline_cuda.cu): a fatbin nvcc makes (sm_80, sm_90 and
# compute_90 PTX, which the driver compiles for newer GPUs), as a C array in build/gen/roofline_cuda_fatbin.h
# for src/cli/roofline_cuda.c; without nvcc that file says in one line that it has none.
ROOFLINE_CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
ifneq ($(NVCC),)
$(B)/gen/roofline_cuda_fatbin.h: src/cli/roofline_cuda.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -fatbin $(ROOFLINE_CUDA_ARCH) -o $(B)/gen/roofline_cuda.fatbin $<
	{ echo '/* generated from src/cli/roofline_cuda.cu by nvcc -fatbin (src/collector/collector.mk) */'; \
	  echo 'static const unsigned char rl_cuda_fatbin[] __attribute__((aligned(8))) = {'; \
	  od -An -v -tx1 $(B)/gen/roofline_cuda.fatbin | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '};'; } >$@.tmp
	mv $@.tmp $@
$(B)/src/cli/roofline_cuda.o $(SAN)/src/cli/roofline_cuda.o: $(B)/gen/roofline_cuda_fatbin.h
$(B)/src/cli/roofline_cuda.o $(SAN)/src/cli/roofline_cuda.o: CPPFLAGS += -I$(B)/gen -DHUBPROF_HAVE_CUDA_BENCH
endif
# the programs of tests/device/cuda_why.sh (-lineinfo: analyze --by line maps their samples to lines)
$(B)/tests/cuda/why_%: tests/cuda/why_%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -lineinfo -std=c++17 $(NVCC_ARCH) $< -o $@
# stand-ins for libcupti and libcuda.so.1, and the program they play a CUDA run to (the sampling path
# without a GPU: tests/cuda/test_cuda.sh)
$(B)/tests/cuda/fake/libcupti.so: tests/cuda/fake_cupti.c src/collector/cupti_pc.h src/collector/prov_cuda.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) -Isrc/collector -fvisibility=default -shared -o $@ $< -lpthread
$(B)/tests/cuda/fake/libcuda.so.1: tests/cuda/fake_cupti.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) -DFAKE_LIBCUDA -fvisibility=default -shared -Wl,-soname,libcuda.so.1 -o $@ $<
$(B)/tests/cuda/why_driver: tests/cuda/why_driver.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $< -o $@ -ldl
# CUDA counters' values table and configuration images (prov_cuda_range*.c): no CUPTI call but the host API's
$(B)/tests/cuda/test_cuda_range: tests/cuda/test_cuda_range.c src/collector/prov_cuda_range_vals.c \
  src/collector/prov_cuda_conv.c src/collector/prov_cuda_range.h tests/check.h $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(INC_TESTS) -Isrc/collector -Iinclude \
	  $(if $(CUDA_HOME_DIR),-DHAVE_CUPTI_H -isystem $(CUDA_HOME_DIR)/include) $< src/collector/prov_cuda_range_vals.c \
	  src/collector/prov_cuda_conv.c $(B)/libhubprof.a -o $@ $(LDLIBS_HUB) -ldl -lm
$(SAN)/tests/cuda/test_cuda_range: tests/cuda/test_cuda_range.c src/collector/prov_cuda_range_vals.c \
  src/collector/prov_cuda_conv.c src/collector/prov_cuda_range.h tests/check.h $(call obj,$(SAN),$(HUB_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  $(CPPFLAGS) $(INC_TESTS) -Isrc/collector $(if $(CUDA_HOME_DIR),-DHAVE_CUPTI_H -isystem $(CUDA_HOME_DIR)/include) \
	  $< src/collector/prov_cuda_range_vals.c src/collector/prov_cuda_conv.c $(call obj,$(SAN),$(HUB_SRC)) -o $@ \
	  $(LDLIBS_HUB) -ldl -lm
CUDA_TESTS := $(B)/tests/cuda/fake/libcupti.so $(B)/tests/cuda/fake/libcuda.so.1 $(B)/tests/cuda/why_driver \
  $(B)/tests/cuda/count_store $(B)/tests/cuda/inject_ocl $(B)/tests/cuda/test_cuda_conv $(SAN)/tests/cuda/test_cuda_conv \
  $(B)/tests/cuda/test_cuda_range $(SAN)/tests/cuda/test_cuda_range $(B)/tests/cuda/counter_table \
  $(if $(NVCC),$(B)/tests/cuda/cuda_app $(B)/tests/cuda/launch_loop $(B)/tests/cuda/why_chase $(B)/tests/cuda/why_axpy \
  $(B)/tests/cuda/stream_copy)
.PHONY: cuda-test
cuda-test: $(CUDA_TESTS) $(B)/hubprof $(B)/libhubprof_collector.so
	bash tests/cuda/test_cuda.sh
# What tests/device/cuda.sh needs on a GPU machine that may lack this one's libraries: the shared libraries of
# hubprof, count_store and the OpenCL examples (the ICD loader libOpenCL.so.1 among them) but the C and C++
# runtimes, copied into $(B)/device/lib, and nvdisasm (toolkit or pip package) into $(B)/device/bin for
# tests/device/cuda_why.sh; carry $(B)/device with the binaries (the script's header).
.PHONY: device-bundle
device-bundle: $(B)/hubprof $(B)/libhubprof_collector.so $(CUDA_TESTS) $(OCL_EXAMPLES)
	@mkdir -p $(B)/device/lib
	@for l in $$(ldd $(B)/hubprof $(B)/tests/cuda/count_store $(B)/examples/ocl/vector_add | \
	    awk '/=> \// {print $$3}' | sort -u); do \
	  case $$(basename $$l) in libc.so*|libm.so*|libstdc++*|libgcc_s*|libz.so*|ld-linux*|libpthread*|libdl*) ;; \
	    *) cp -L $$l $(B)/device/lib/ ;; esac; done
	@for n in $$(command -v nvdisasm) $(CUDA_HOME_DIR)/bin/nvdisasm \
	    $$(ls -d $$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)/nvidia/cu*/bin/nvdisasm 2>/dev/null); do \
	    if [ -x "$$n" ]; then mkdir -p $(B)/device/bin && cp -L "$$n" $(B)/device/bin/nvdisasm; break; fi; done
	@du -sh $(B)/hubprof $(B)/libhubprof_collector.so $(B)/tests/cuda $(B)/examples/ocl $(B)/device
