# hubprof build: the hub library, the collector's log-only subset, the CLI, tests, fuzzers and benchmarks.
# `make demo` and `make test` install what is missing first (scripts/deps.sh), then build and run.

CC      ?= cc
CFLAGS  ?= -O2 -g
CSTD    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -fPIC -pthread
CPPFLAGS += -Iinclude -Isrc/hub -Isrc/counters
LDLIBS_HUB := -lsqlite3 -lzstd -lpthread
B       := build
SAN     := $(B)/san

HUB_SRC := src/hub/hub.c src/hub/schema.c src/hub/crc32c.c src/hub/merge.c \
           src/hub/fmt_log.c src/hub/fmt_rocpd.c $(wildcard src/hub/rocpd_*.c) src/hub/fmt_parquet.c $(wildcard src/hub/parquet_*.c) \
           src/hub/formats.c src/analysis/analysis.c
# The collector's subset: no SQLite, no Parquet.
HUBLOG_SRC := src/hub/hub.c src/hub/schema.c src/hub/crc32c.c src/hub/fmt_log.c src/hub/formats_log.c
CLI_SRC := $(wildcard src/cli/*.c)
# Counter providers and the pass planner: linked into the CLI and the collector (no SQLite).
COUNTERS_SRC := $(wildcard src/counters/*.c)
HDRS    := $(wildcard include/hubprof/*.h src/hub/*.h src/cli/*.h src/counters/*.h)

TESTS   := $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
FUZZERS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

obj = $(patsubst %.c,$(1)/%.o,$(2))

.PHONY: all deps demo test test-only check-format format bench fuzz clean san
all: $(B)/libhubprof.so $(B)/libhubprof.a $(B)/libhubprof_log.a $(B)/hubprof $(B)/examples/gen_logs collector

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
$(B)/libhubprof.so: $(call obj,$(B),$(HUB_SRC))
	$(CC) -shared -o $@ $^ $(LDLIBS_HUB)

$(B)/hubprof: $(call obj,$(B),$(CLI_SRC) $(COUNTERS_SRC)) $(B)/libhubprof.a
	$(CC) -o $@ $^ $(LDLIBS_HUB)

# Tests: each tests/test_X.c is a program linked with the hub; built plain and with ASan/UBSan.
$(B)/tests/%: tests/%.c tests/check.h $(B)/libhubprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(CFLAGS) $(CPPFLAGS) -Itests $< $(B)/libhubprof.a -o $@ $(LDLIBS_HUB)
$(SAN)/tests/%: tests/%.c tests/check.h $(call obj,$(SAN),$(HUB_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	  $(CPPFLAGS) -Itests $< $(call obj,$(SAN),$(HUB_SRC)) -o $@ $(LDLIBS_HUB)
$(SAN)/hubprof: $(call obj,$(SAN),$(CLI_SRC) $(COUNTERS_SRC) $(HUB_SRC))
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

# analysis.c compiles the metrics engine in (src/counters/metrics.c, weak linkage): rebuild it with it.
$(B)/src/analysis/analysis.o $(SAN)/src/analysis/analysis.o: src/counters/metrics.c

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
