#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600), one after another.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Each target starts from its committed seeds (fuzz/seeds/<target>) and grows its working
# corpus in fuzz/corpus/<target> (git-ignored); crashes land in fuzz/artifacts/<target>.
# Needs nightly; installs cargo-fuzz when it is missing. Extra libFuzzer options can be
# passed in FUZZ_ARGS, e.g. FUZZ_ARGS="-jobs=2 -workers=2".
set -euo pipefail

cd "$(dirname "$0")/.."
secs="${1:-600}"
shift || true
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cd fuzz/fuzz_targets && ls -- *.rs | sed 's/\.rs$//')
fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly install cargo-fuzz --locked
fi

# No sanitizer: the code is safe Rust, and ASan would double the build and run cost.
# Debug assertions stay on (cargo-fuzz's default), so overflow checks fire.
cargo +nightly fuzz build --fuzz-dir fuzz -s none

failed=()
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    echo "== $t (${secs}s)"
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of options.
    if ! cargo +nightly fuzz run --fuzz-dir fuzz -s none "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 ${FUZZ_ARGS:-}; then
        failed+=("$t")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "crashed: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
