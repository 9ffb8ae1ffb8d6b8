# Thin wrapper over CMake. `make` builds build/anymove; `make demo` and `make test` first
# install what is missing (scripts/deps.sh), so both work on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
RELEASE_BUILD ?= build-release
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
# `make test` also builds clang's Release here when set (.ci/run does), beside the tests.
CLANG_RELEASE_BUILD ?=
# The tests that run library calls on several threads (ThreadSanitizer checks them).
TSAN_TARGETS := test_concurrency test_context test_decompose
TSAN_TESTS := test_concurrency test_context_threads test_decompose
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
MAKEFLAGS  += --no-print-directory

.PHONY: all build deps demo test test-fast python-test asan release tsan tsan-build tsan-test fuzz bench clean

all: build

deps:
	@bash scripts/deps.sh

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DAM_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# -O3 sees through more code than -O2 and warns where it does not (maybe-uninitialized): built
# by `make test` so that a Release build that fails is caught, not found by a user.
release:
	@cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(RELEASE_BUILD) -j $(JOBS)

# ThreadSanitizer (clang): builds the threaded tests and runs them; any report fails them.
tsan: tsan-build
	@$(MAKE) tsan-test

tsan-build:
	@CC=clang cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAM_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TARGETS)

tsan-test:
	@cd $(TSAN_BUILD) && ctest --output-on-failure -j $(JOBS) -R '^($(subst $(eval) ,|,$(TSAN_TESTS)))$$'

demo: deps build
	@bash examples/demo.sh $(BUILD)/anymove

# Every test: the optimized build, then the AddressSanitizer + UBSan build, then the threaded
# tests under ThreadSanitizer; the Release build only has to compile warning-free. It and the
# TSan build compile at nice 19 beside the others (scripts/test.sh says why).
test:
	@BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD) RELEASE_BUILD=$(RELEASE_BUILD) TSAN_BUILD=$(TSAN_BUILD) \
	  JOBS=$(JOBS) CLANG_RELEASE_BUILD=$(CLANG_RELEASE_BUILD) bash scripts/test.sh

# The Python binding (python/): its pytest suite against build/libanymove.so and build/anymove
# (also one of the tests `make test` runs).
python-test: deps build
	@cd $(BUILD) && ctest --output-on-failure -L python

test-fast: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# libFuzzer (clang): each target runs FUZZ_SECONDS on its corpus; crashes land in fuzz/crashes/<fmt>/.
fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DAM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	@bash bench/fk.sh $(BUILD)/anymove

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(RELEASE_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)
