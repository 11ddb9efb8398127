# hubprof build: the hub library, the collector's log-only subset, the CLI, tests, fuzzers and benchmarks.
# `make demo` and `make test` install what is missing first (scripts/deps.sh), then build and run.

CC      ?= cc
CFLAGS  ?= -O2 -g
CSTD    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -fPIC -pthread
CPPFLAGS += -Iinclude -Isrc/hub -Isrc/counters
LDLIBS_HUB := -lsqlite3 -lzstd -lpthread
B       := build
SAN     := $(B)/san

# Shared utilities (buffers, hashing, JSON, varints, maps, directories, text): no dependency at all.
COMMON_SRC := $(wildcard src/common/*.c)
# Counter providers, the pass planner and the metrics engine: no SQLite. Their own archive
# (libhubprof_counters.a) and part of libhubprof, whose analysis evaluates metrics.
COUNTERS_SRC := $(wildcard src/counters/*.c)
HUB_SRC := src/hub/hub.c src/hub/schema.c src/hub/crc32c.c src/hub/merge.c \
           src/hub/fmt_log.c src/hub/fmt_rocpd.c src/hub/fmt_parquet.c $(wildcard src/hub/parquet_*.c) \
           src/hub/formats.c src/analysis/analysis.c $(COUNTERS_SRC) $(COMMON_SRC)
# The collector's subset: no SQLite, no Parquet.
HUBLOG_SRC := src/hub/hub.c src/hub/schema.c src/hub/crc32c.c src/hub/fmt_log.c src/hub/formats_log.c \
              $(COMMON_SRC)
CLI_SRC := $(wildcard src/cli/*.c)
HDRS    := $(wildcard include/hubprof/*.h src/hub/*.h src/cli/*.h src/counters/*.h src/common/*.h)

TESTS   := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
FUZZERS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps demo test test-only check-format format bench fuzz clean san
all: $(B)/libhubprof.so $(B)/libhubprof.a $(B)/libhubprof_log.a $(B)/libhubprof_counters.a $(B)/hubprof \
     $(B)/examples/gen_logs collector

$(B)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(SAN)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined $(CPPFLAGS) -c $< -o $@

$(B)/libhubprof.a: $(call obj,$(B),$(HUB_SRC))
	ar rcs $@ $^
$(B)/libhubprof_log.a: $(call obj,$(B),$(HUBLOG_SRC))
	ar rcs $@ $^
$(B)/libhubprof_counters.a: $(call obj,$(B),$(COUNTERS_SRC) $(COMMON_SRC))
	ar rcs $@ $^
$(B)/libhubprof.so: $(call obj,$(B),$(HUB_SRC))
	$(CC) -shared -o $@ $^ $(LDLIBS_HUB)

$(B)/hubprof: $(call obj,$(B),$(CLI_SRC)) $(B)/libhubprof.a
	$(CC) -o $@ $^ $(LDLIBS_HUB)

# Tests: each tests/test_X.c is a program linked with the hub; built plain and with ASan/UBSan.
$(B)/tests/%: tests/%.c tests/check.h $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) -Itests $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)
# The counters' tests link the counters archive alone: it must stand without the hub or SQLite.
$(B)/tests/test_planner: tests/test_planner.c tests/check.h $(B)/libhubprof_counters.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) -Itests $< $(B)/libhubprof_counters.a -o $@ -lpthread
$(SAN)/tests/%: tests/%.c tests/check.h $(call obj,$(SAN),$(HUB_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  $(CPPFLAGS) -Itests $< $(call obj,$(SAN),$(HUB_SRC)) -o $@ $(LDLIBS_HUB)
$(SAN)/hubprof: $(call obj,$(SAN),$(CLI_SRC) $(HUB_SRC))
	$(CC) -fsanitize=address,undefined -o $@ $^ $(LDLIBS_HUB)

san: $(addprefix $(SAN)/tests/,$(TESTS)) $(SAN)/hubprof

# libFuzzer targets (clang), run briefly by the test suite.
FUZZ_CC ?= clang
$(B)/fuzz/%: tests/fuzz/%.c $(HUB_SRC) $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined $(CPPFLAGS) $< $(HUB_SRC) -o $@ $(LDLIBS_HUB)
fuzz: $(addprefix $(B)/fuzz/,$(FUZZERS))

$(B)/examples/%: examples/%.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)

$(B)/bench/%: bench/%.c $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g $(CPPFLAGS) $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)

deps:
	@bash scripts/deps.sh

# Every test: unit and end-to-end tests, the same under ASan/UBSan, the fuzzers briefly.
test: deps
	$(MAKE) -j2 all san fuzz $(addprefix $(B)/tests/,$(TESTS))
	@bash tests/run.sh

demo: deps all
	@bash scripts/demo.sh

bench: deps all $(addprefix $(B)/bench/,$(patsubst bench/%.c,%,$(wildcard bench/*.c)))
	@bash bench/run.sh

check-format:
	clang-format --dry-run -Werror $(shell git ls-files '*.c' '*.h')
format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

clean:
	rm -rf $(B)

include src/collector/collector.mk
