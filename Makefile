# hubprof build: the hub library, the collector's log-only subset, the CLI, tests, fuzzers and benchmarks.
# `make demo` and `make test` install what is missing first (scripts/deps.sh), then build and run.
# SPDX-License-Identifier: MIT

CC      ?= cc
CFLAGS  ?= -O2 -g
# Asserts check internal invariants (docs/development.md, "Asserts"): live in `make DEBUG=1` and in the
# sanitizer builds (build/san, the fuzzers), compiled out (NDEBUG) in the release build. The sanitizer rules
# do not use CFLAGS.
ifneq ($(DEBUG),1)
override CFLAGS += -DNDEBUG
endif
# One version source: the VERSION file (library, CLI, pkg-config file, Python package).
VERSION := $(shell cat VERSION)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
# Hidden by default: only declarations marked HP_API (include/hubprof/export.h) leave a shared library.
CSTD    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -fPIC -pthread -fvisibility=hidden
CPPFLAGS += -Iinclude -DHP_VERSION='"$(VERSION)"'
# Internal headers by module (docs/development.md, "Build, ABI and install"): public code sees include/ only.
INC_HUB := -Isrc/hub
INC_COUNTERS := -Isrc/counters
INC_TESTS := $(INC_HUB) $(INC_COUNTERS) -Itests
# Dependency files (build/**/*.d) for incremental builds and tests/check_deps.sh (system headers too).
DEPFLAGS := -MD -MP
# The reading library needs these alone (tests/abi/test_abi.sh checks its DT_NEEDED).
LDLIBS_HUB := -lsqlite3 -lzstd -lsnappy -lz -lpthread
# The code plugin (libhubprof_code.so, src/analysis/code_plugin.h): reading code objects for the sample views
# (capstone, libdw, libelf), loaded by the analysis when a view asks for the code, never linked into libhubprof.
CODE_SRC := src/analysis/code_read.c src/analysis/code_sass.c src/analysis/code_lines.c src/analysis/code_find.c \
            src/analysis/code_api.c src/analysis/code_llvm.c src/common/hu_part.c
LDLIBS_CODE := -lcapstone -ldw -lelf
B       := build
SAN     := $(B)/san

# Shared utilities (buffers, hashing, JSON, varints, maps, directories, text): no dependency at all.
COMMON_SRC := $(wildcard src/common/*.c)
# Counter providers, the pass planner and the metrics engine: no SQLite. Their own archive
# (libhubprof_counters.a) and part of libhubprof, whose analysis evaluates metrics.
COUNTERS_SRC := $(wildcard src/counters/*.c)
# The merge and the assembly pipeline (src/assembly/): a layer above the hub's storage, in the same library.
ASSEMBLY_SRC := $(wildcard src/assembly/*.c)
HUB_SRC := src/hub/hub.c src/hub/schema.c src/hub/crc32c.c $(ASSEMBLY_SRC) \
           src/hub/fmt_log.c src/hub/fmt_log_cols.c src/hub/fmt_log_read.c src/hub/fmt_log_launch_read.c src/hub/fmt_log_write.c src/hub/fmt_rocpd.c $(wildcard src/hub/rocpd_*.c) src/hub/fmt_parquet.c \
           $(wildcard src/hub/parquet_*.c) src/hub/formats.c $(filter-out src/analysis/llvm_regen.c $(CODE_SRC),$(wildcard src/analysis/*.c)) src/analysis/code_find.c $(COUNTERS_SRC) $(COMMON_SRC) \
           src/hub/code_bytes.c src/hub/hub_layer.c
# The collector's subset: no SQLite, no Parquet.
HUBLOG_SRC := src/hub/hub.c src/hub/schema.c src/hub/crc32c.c src/hub/fmt_log.c src/hub/fmt_log_cols.c src/hub/fmt_log_read.c src/hub/fmt_log_launch_read.c src/hub/fmt_log_write.c \
              src/hub/formats_log.c \
              $(COMMON_SRC) src/hub/code_bytes.c
# The timeline exporter (hubprof export): reads through the hub's public API, linked into the CLI. OTF2 output
# when the OTF2 library is installed (libotf2-trace-dev, found through otf2-config).
EXPORT_SRC := $(wildcard src/export/*.c)
HAVE_OTF2 := $(shell command -v otf2-config >/dev/null 2>&1 && echo 1)
LDLIBS_EXPORT := $(if $(HAVE_OTF2),$(shell otf2-config --ldflags) $(shell otf2-config --libs)) -lm
# The optional parts found when make read this file, in one file: objects that depend on them rebuild when they
# change (a machine where `make deps` installed libotf2 after an earlier build). `demo` and `test` run `deps`
# first and the build in a second make, which reads this file again.
FEATURES := otf2=$(if $(HAVE_OTF2),1,0)
ifeq ($(filter clean deps,$(MAKECMDGOALS)),)
$(shell mkdir -p $(B) && { [ "$$(cat $(B)/features 2>/dev/null)" = "$(FEATURES)" ] || echo "$(FEATURES)" >$(B)/features; })
endif
CLI_SRC := $(wildcard src/cli/*.c) $(EXPORT_SRC)
HDRS    := $(wildcard include/hubprof/*.h src/hub/*.h src/assembly/*.h src/analysis/*.h src/cli/*.h src/counters/*.h src/common/*.h src/export/*.h)

TESTS   := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
FUZZERS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps demo test test-only check-format format bench bench-check fuzz clean san install uninstall
all: $(B)/libhubprof.so $(B)/libhubprof.so.$(SOVERSION) $(B)/libhubprof.a $(B)/libhubprof_log.a \
     $(B)/libhubprof_counters.a $(B)/hubprof $(B)/libhubprof_code.so $(B)/examples/gen_logs collector

$(B)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(DEPFLAGS) -c $< -o $@

$(SAN)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined $(CPPFLAGS) $(DEPFLAGS) -c $< -o $@

# Who sees which internal headers: the CLI and analysis the counters' (and the CLI nothing of the hub's).
$(B)/src/analysis/%.o $(SAN)/src/analysis/%.o $(B)/src/cli/%.o $(SAN)/src/cli/%.o: CPPFLAGS += $(INC_COUNTERS)
$(B)/src/export/%.o $(SAN)/src/export/%.o: CPPFLAGS += $(if $(HAVE_OTF2),-DHUBPROF_HAVE_OTF2 $(shell otf2-config --cflags))
$(addprefix $(B)/,$(EXPORT_SRC:.c=.o)) $(addprefix $(SAN)/,$(EXPORT_SRC:.c=.o)): $(B)/features
# The report's script (src/export/report.js) as a C string, build/gen/report_js.h (its CSP hash is taken at run
# time from that string). '??' is refused: C11 would read it as a trigraph.
$(B)/gen/report_js.h: src/export/report.js
	@mkdir -p $(dir $@)
	@! grep -q '??' $< || { echo "$<: '??' would be a C trigraph" >&2; exit 1; }
	{ echo '/* generated from src/export/report.js by the Makefile */'; echo 'static const char rp_script[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } >$@.tmp && mv $@.tmp $@
$(B)/src/export/report_html.o $(SAN)/src/export/report_html.o: $(B)/gen/report_js.h
$(B)/src/export/%.o $(SAN)/src/export/%.o: CPPFLAGS += -I$(B)/gen
$(B)/src/hub/hub.o $(SAN)/src/hub/hub.o: VERSION
-include $(shell find $(B) -name '*.d' 2>/dev/null)

$(B)/libhubprof.a: $(call obj,$(B),$(HUB_SRC))
	rm -f $@ && ar rcs $@ $^
$(B)/libhubprof_log.a: $(call obj,$(B),$(HUBLOG_SRC))
	rm -f $@ && ar rcs $@ $^
$(B)/libhubprof_counters.a: $(call obj,$(B),$(COUNTERS_SRC) $(COMMON_SRC))
	rm -f $@ && ar rcs $@ $^
# The shared library: soname libhubprof.so.$(SOVERSION), file libhubprof.so.$(VERSION), the exports named one
# by one in src/hub/libhubprof.symbols (the one list: the version script is made from it, and
# tests/abi/test_abi.sh checks it against the exports and the HP_API declarations).
LIB_SO := libhubprof.so.$(VERSION)
$(B)/libhubprof.map: src/hub/libhubprof.symbols
	@mkdir -p $(dir $@)
	{ echo "HUBPROF_$(SOVERSION) {"; echo "  global:"; grep -v '^#' $< | sed 's/.*/    &;/'; \
	  echo "  local:"; echo "    *;"; echo "};"; } >$@.tmp && mv $@.tmp $@
$(B)/$(LIB_SO): $(call obj,$(B),$(HUB_SRC)) $(B)/libhubprof.map
	$(CC) -shared -Wl,-soname,libhubprof.so.$(SOVERSION) -Wl,--version-script=$(B)/libhubprof.map -Wl,-z,defs \
	  -o $@ $(filter %.o,$^) $(LDLIBS_HUB)
$(B)/libhubprof.so.$(SOVERSION) $(B)/libhubprof.so: $(B)/$(LIB_SO)
	ln -sf $(LIB_SO) $@

# The code plugin, plain and sanitized: the one export hubprof_code_api (-fvisibility=hidden hides the rest).
# Found beside the library or program that loads it (build/, build/san/: src/common/hu_part.c).
$(B)/libhubprof_code.so: $(call obj,$(B),$(CODE_SRC))
	$(CC) -shared -Wl,-z,defs -o $@ $^ $(LDLIBS_CODE)
$(SAN)/libhubprof_code.so: $(call obj,$(SAN),$(CODE_SRC))
	$(CC) -shared -fsanitize=address,undefined -Wl,-z,defs -o $@ $^ $(LDLIBS_CODE)

$(B)/hubprof: $(call obj,$(B),$(CLI_SRC)) $(B)/libhubprof.a | $(B)/libhubprof_code.so
	$(CC) -o $@ $^ $(LDLIBS_HUB) $(LDLIBS_EXPORT)

# Tests: each tests/test_X.c is a program linked with the hub; built plain and with ASan/UBSan (the code
# plugin beside them for the sample views).
$(B)/tests/%: tests/%.c tests/check.h $(B)/libhubprof.a | $(B)/libhubprof_code.so
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(INC_TESTS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)
# The code reader's test calls it directly: linked with the plugin's objects.
$(B)/tests/test_code_read: tests/test_code_read.c tests/check.h $(call obj,$(B),$(CODE_SRC)) $(B)/libhubprof.a \
  | $(B)/libhubprof_code.so
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(INC_TESTS) $< $(call obj,$(B),$(CODE_SRC)) $(B)/libhubprof.a -o $@ \
	  $(LDLIBS_HUB) $(LDLIBS_CODE)
# The counters' tests link the counters archive alone: it must stand without the hub or SQLite.
$(B)/tests/test_planner: tests/test_planner.c tests/check.h $(B)/libhubprof_counters.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(INC_TESTS) $< $(B)/libhubprof_counters.a -o $@ -lpthread
# CUDA PC sampling's record layouts are checked against the toolkit's header where it is installed.
CUDA_INC ?= /usr/local/cuda/include
$(B)/tests/test_cupti_pc $(SAN)/tests/test_cupti_pc: CPPFLAGS += $(if $(wildcard $(CUDA_INC)/cupti_pcsampling.h),-isystem $(CUDA_INC) -DHPC_HAVE_CUPTI_H)
$(B)/tests/test_cupti_pc $(SAN)/tests/test_cupti_pc: src/collector/cupti_pc.c src/collector/cupti_pc.h src/collector/sample_cupti_pc.c src/collector/sample_cupti_pm.c \
  src/collector/cuda_cubin.c src/collector/cuda_cubin.h
# ... and it places PCs in SASS (cr_sass_find): linked with the code plugin's objects, as test_code_read
$(B)/tests/test_cupti_pc: tests/test_cupti_pc.c tests/check.h $(call obj,$(B),$(CODE_SRC)) $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $(INC_TESTS) $< $(call obj,$(B),$(CODE_SRC)) $(B)/libhubprof.a -o $@ \
	  $(LDLIBS_HUB) $(LDLIBS_CODE)
$(SAN)/tests/test_cupti_pc: tests/test_cupti_pc.c tests/check.h $(call obj,$(SAN),$(sort $(HUB_SRC) $(CODE_SRC)))
	@mkdir -p $(dir $@)
	$(SAN_LINK) $(CPPFLAGS) $(INC_TESTS) $< $(call obj,$(SAN),$(sort $(HUB_SRC) $(CODE_SRC))) -o $@ \
	  $(LDLIBS_HUB) $(LDLIBS_CODE)
SAN_LINK := $(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# The sanitized programs load libdw and libelf at start although only the code plugin calls them: GCC 12's
# LeakSanitizer crashes at exit ("Tracer caught signal 11", a bogus DTLS range) on the thread-local storage of
# a library first loaded by dlopen. Loaded at start, their TLS is static, as in any program linking them.
SAN_CODE_TLS := -Wl,--no-as-needed -ldw -lelf -Wl,--as-needed
$(SAN)/tests/%: tests/%.c tests/check.h $(call obj,$(SAN),$(HUB_SRC)) | $(SAN)/libhubprof_code.so
	@mkdir -p $(dir $@)
	$(SAN_LINK) $(CPPFLAGS) $(INC_TESTS) $< $(call obj,$(SAN),$(HUB_SRC)) -o $@ $(LDLIBS_HUB) $(SAN_CODE_TLS)
$(SAN)/tests/test_code_read: tests/test_code_read.c tests/check.h $(call obj,$(SAN),$(sort $(HUB_SRC) $(CODE_SRC))) \
  | $(SAN)/libhubprof_code.so
	@mkdir -p $(dir $@)
	$(SAN_LINK) $(CPPFLAGS) $(INC_TESTS) $< $(call obj,$(SAN),$(sort $(HUB_SRC) $(CODE_SRC))) -o $@ \
	  $(LDLIBS_HUB) $(LDLIBS_CODE)
$(SAN)/hubprof: $(call obj,$(SAN),$(CLI_SRC) $(HUB_SRC)) | $(SAN)/libhubprof_code.so
	$(CC) -fsanitize=address,undefined -o $@ $^ $(LDLIBS_HUB) $(LDLIBS_EXPORT) $(SAN_CODE_TLS)

san: $(addprefix $(SAN)/tests/,$(TESTS)) $(SAN)/hubprof $(SAN)/libhubprof_code.so

# libFuzzer targets (clang), run briefly by the test suite.
FUZZ_CC ?= clang
$(B)/fuzz/%: tests/fuzz/%.c $(HUB_SRC) $(HDRS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined $(CPPFLAGS) $(INC_TESTS) $< $(HUB_SRC) -o $@ \
	  $(LDLIBS_HUB)
# The code-object reader of the attribution groupings (the code plugin's sources) alone: its own rule.
$(B)/fuzz/fuzz_code: tests/fuzz/fuzz_code.c $(CODE_SRC) src/common/hu_bytes.c src/analysis/code_read.h \
  src/analysis/code_lines.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined $(CPPFLAGS) $< $(CODE_SRC) src/common/hu_bytes.c -o $@ \
	  $(LDLIBS_CODE)
fuzz: $(addprefix $(B)/fuzz/,$(FUZZERS))

# The LLVM plugin of analysis (source lines for -g alone on PoCL, src/analysis/llvm_regen.c): LLVM 15's C API,
# dlopened by src/analysis/code_lines.c, never linked into libhubprof; built when llvm-15-dev is installed.
LLVM15_INC := /usr/lib/llvm-15/include
ifneq ($(wildcard $(LLVM15_INC)/llvm-c/Core.h),)
all: $(B)/libhubprof_llvm.so
endif
$(B)/libhubprof_llvm.so: src/analysis/llvm_regen.c src/analysis/llvm_regen.h
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) -shared -I$(LLVM15_INC) $< -o $@ -l:libLLVM-15.so.1

$(B)/examples/%: examples/%.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)

# A preload that starts one idle thread (bench_trace.sh: the price of a second thread, without a collector).
$(B)/bench/idle_thread.so: bench/idle_thread.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -shared $< -o $@
$(B)/bench/%: bench/%.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)

deps:
	@bash scripts/deps.sh

# make install [PREFIX=/usr/local] [DESTDIR=]: the library (and its soname links), the public headers, the CLI,
# the collector in lib/hubprof (where the CLI looks, run_app.c), the data files in share/hubprof (where the
# counters look: two folders above the executable or library at most) and hubprof.pc for pkg-config.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
COLLDIR := $(PREFIX)/lib/hubprof
DATA_FILES := $(shell find share/hubprof -type f 2>/dev/null)
PUBLIC_HDRS := $(wildcard include/hubprof/*.h)
# hubprof.pc: paths under the prefix are written relative to ${prefix}
pcdir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(COLLDIR) $(DESTDIR)$(INCLUDEDIR)/hubprof \
	  $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(B)/hubprof $(DESTDIR)$(BINDIR)/hubprof
	install -m 755 $(B)/$(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SO)
	ln -sf $(LIB_SO) $(DESTDIR)$(LIBDIR)/libhubprof.so.$(SOVERSION)
	ln -sf libhubprof.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libhubprof.so
	install -m 755 $(B)/libhubprof_collector.so $(DESTDIR)$(COLLDIR)/libhubprof_collector.so
	install -m 755 $(B)/libhubprof_exit.so $(DESTDIR)$(COLLDIR)/libhubprof_exit.so
	install -m 755 $(B)/libhubprof_code.so $(DESTDIR)$(COLLDIR)/libhubprof_code.so
	if [ -e $(B)/libhubprof_llvm.so ]; then install -m 755 $(B)/libhubprof_llvm.so $(DESTDIR)$(COLLDIR)/; fi
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/hubprof/
	for f in $(DATA_FILES:share/%=%); do install -D -m 644 share/$$f $(DESTDIR)$(DATADIR)/$$f || exit 1; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pcdir,$(LIBDIR))|' \
	  -e 's|@INCLUDEDIR@|$(call pcdir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' hubprof.pc.in \
	  >$(DESTDIR)$(PKGCONFIGDIR)/hubprof.pc.tmp
	mv $(DESTDIR)$(PKGCONFIGDIR)/hubprof.pc.tmp $(DESTDIR)$(PKGCONFIGDIR)/hubprof.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hubprof $(DESTDIR)$(LIBDIR)/$(LIB_SO) $(DESTDIR)$(LIBDIR)/libhubprof.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libhubprof.so $(DESTDIR)$(COLLDIR)/libhubprof_collector.so $(DESTDIR)$(COLLDIR)/libhubprof_exit.so \
	  $(DESTDIR)$(COLLDIR)/libhubprof_llvm.so $(DESTDIR)$(COLLDIR)/libhubprof_code.so \
	  $(PUBLIC_HDRS:include/%=$(DESTDIR)$(INCLUDEDIR)/%) $(DATA_FILES:share/%=$(DESTDIR)$(DATADIR)/%) \
	  $(DESTDIR)$(PKGCONFIGDIR)/hubprof.pc
	-rmdir $(DESTDIR)$(COLLDIR) $(DESTDIR)$(INCLUDEDIR)/hubprof $(sort $(dir $(DATA_FILES:share/%=$(DESTDIR)$(DATADIR)/%))) \
	  $(DESTDIR)$(DATADIR)/hubprof 2>/dev/null

# Every test: unit and end-to-end tests, the same under ASan/UBSan, the fuzzers briefly.
test: deps
	$(MAKE) -j2 all san fuzz $(addprefix $(B)/tests/,$(TESTS)) $(CUDA_TESTS)
	@bash tests/run.sh

demo: deps
	$(MAKE) -j2 all
	@bash scripts/demo.sh

bench: deps all $(addprefix $(B)/bench/,$(patsubst bench/%.c,%,$(filter-out bench/idle_thread.c,$(wildcard bench/*.c)))) \
  $(B)/bench/idle_thread.so
	@bash bench/run.sh

# The release guard (bench/bench_check.sh, docs/development.md "The release guard"): this tree against the
# baseline commit of bench/BASELINE on the headline figures; a verdict on an idle machine only. Never part of
# `make test`. BASE=<commit> another baseline; SPIN=N this tree's collector slowed by N pause instructions per
# dispatch (to see it fail); ROUNDS / STORE_ROUNDS the rounds (31 / 5).
bench-check:
	@$(if $(BASE),BENCH_CHECK_BASE='$(BASE)') $(if $(SPIN),BENCH_CHECK_SPIN='$(SPIN)') \
	  $(if $(ROUNDS),BENCH_CHECK_ROUNDS='$(ROUNDS)') $(if $(STORE_ROUNDS),BENCH_CHECK_STORE_ROUNDS='$(STORE_ROUNDS)') \
	  bash bench/bench_check.sh

check-format:
	clang-format --dry-run -Werror $(shell git ls-files '*.c' '*.h')
format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

clean:
	rm -rf $(B)

include src/collector/collector.mk

# Cluster runs (docs/cluster.md): the MPI + OpenCL example, built when an MPI compiler is installed
# (Debian's openmpi-bin and libopenmpi-dev, scripts/deps.sh); tests/cluster/test_cluster.sh skips without it.
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
all: $(B)/examples/mpi/mpi_ocl
$(B)/examples/mpi/mpi_ocl: examples/mpi/mpi_ocl.c $(wildcard examples/ocl/*.h)
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(CSTD) $(CFLAGS) $< -o $@ -lOpenCL
endif
