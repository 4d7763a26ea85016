# refenc: the two Quick start commands are `make run` and `make test`. Both install what is missing
# (scripts/setup.sh, apt-get), configure and build before they do their job.
BUILD ?= build/release
JOBS ?= 2
MANIFEST ?= workloads/nightly.json
REFENC := $(BUILD)/apps/refenc/refenc

.PHONY: all setup configure build build-cli run test bench clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

# Everything: the libraries, the CLI, the tests, the benchmarks.
build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what `make run` runs: the CLI and the libraries it links (no tests, no benchmarks).
build-cli: configure
	@cmake --build $(BUILD) -j $(JOBS) --target refenc

# The main job: profile the nightly workload (all three models, cold/warm/warm-disk/warm-shared, the
# last over a private redis-server on loopback that the run starts and stops; M4a/M4b, concurrency 8
# and 16), print the summary and the gate verdicts, and write the report into runs/.
# Exit codes 10-12 are gate verdicts (NO-GO, INCONCLUSIVE, MISSING_ARM), not failures of the run:
# `refenc gate` is what a CI job acts on.
run: build-cli
	@rc=0; $(REFENC) profile $(MANIFEST) || rc=$$?; case $$rc in 0|10|11|12) exit 0;; *) exit $$rc;; esac

# Every test: the unit and integration suites (ctest), the core under ThreadSanitizer and under
# AddressSanitizer+UBSan, and a short run of each fuzz target.
test:
	@scripts/test.sh

bench: configure
	@cmake --build $(BUILD) -j $(JOBS) --target benches
	@for b in $(BUILD)/bench/bench_*; do echo "== $$b"; $$b; done

clean:
	rm -rf build
