#!/usr/bin/env bash
# Builds one libFuzzer harness and runs it for SECONDS on its committed corpus; new inputs it finds go into
# that corpus. A crash leaves crash-* in .build/fuzz/NAME and exits non-zero.
#
#   scripts/fuzz.sh NAME [SECONDS]     one harness (default 60 s)
#   scripts/fuzz.sh all [SECONDS]      every harness in turn
#   scripts/fuzz.sh list               the harnesses found
#
# With FUZZ_LEDGER=FILE (the test command sets it) new inputs go to a throwaway folder instead of the corpus, and
# each harness appends its figures (inputs run, crashes) to FILE as one line of the fault and load ledger.
#
# A harness is Tests/Fuzz/GROUP/NAME.swift (any GROUP folder), defining LLVMFuzzerTestOneInput; its corpus is
# Tests/Fuzz/GROUP/corpus/NAME. The modules it imports are named on a line of the harness:
#   // fuzz-modules: StewardLog OutputText Config              (each built from Sources/MODULE/*.swift)
#   // fuzz-modules: Control=ControlRequest.swift (only the files listed, comma-separated, from Sources/Control)
# in dependency order, so adding a harness needs no change here. A harness that needs internal types instead names
# the source files it is compiled with, as one module:
#   // fuzz-sources: Sources/HTTP/RetryAfter.swift Sources/Storage/JSONValue.swift …
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: scripts/fuzz.sh NAME|all|list [SECONDS]}"
seconds="${2:-60}"

harnesses() { find Tests/Fuzz -mindepth 2 -maxdepth 2 -name '*.swift' | sort; }
if [[ "$name" == list ]]; then harnesses | sed 's|.*/||; s|\.swift$||'; exit 0; fi
if [[ "$name" == all ]]; then
    failed=0
    for h in $(harnesses); do n="${h##*/}"; "$0" "${n%.swift}" "$seconds" || failed=1; done
    exit "$failed"
fi

matches=$(find Tests/Fuzz -mindepth 2 -maxdepth 2 -name "$name.swift")
[[ -n "$matches" && $(wc -l <<<"$matches") -eq 1 ]] || { echo "no single harness Tests/Fuzz/*/$name.swift" >&2; exit 64; }
harness="$matches"
group_dir="$(dirname "$harness")"
corpus="$group_dir/corpus/$name"
out=".build/fuzz/$name"
mkdir -p "$out" "$corpus"
flags=(-parse-as-library -sanitize=fuzzer,address -g -Onone -I "$out" -L "$out")
# The compiler's and linker's chatter (the sanitizer runtime's symbol warnings) goes to a log, shown on failure.
build() { "$@" >>"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; echo "fuzz: building $name failed" >&2; exit 1; }; }
: >"$out/build.log"

sources_line=$(grep -m1 '^// fuzz-sources:' "$harness" || true)
modules_line=$(grep -m1 '^// fuzz-modules:' "$harness" || true)
[[ -n "$modules_line$sources_line" ]] || { echo "$harness has no '// fuzz-modules:' or '// fuzz-sources:' line" >&2; exit 64; }
libs=()
sources=()
for f in ${sources_line#// fuzz-sources:}; do sources+=("$f"); done
for spec in ${modules_line#// fuzz-modules:}; do
    module="${spec%%=*}"
    if [[ "$spec" == *=* ]]; then
        IFS=, read -ra names <<<"${spec#*=}"
        files=(); for f in "${names[@]}"; do files+=("Sources/$module/$f"); done
    else
        files=(Sources/"$module"/*.swift)
    fi
    # An instrumented static library and its module file.
    build swiftc "${flags[@]}" -emit-library -static -emit-module -module-name "$module" -o "$out/lib$module.a" "${files[@]}"
    libs=("-l$module" "${libs[@]}")  # static libraries link dependents first
done
build swiftc "${flags[@]}" -module-name "fuzz_${name//-/_}" "$harness" "${sources[@]}" "${libs[@]}" -o "$out/fuzz-$name"
corpus_abs="$(cd "$corpus" && pwd)"
dirs=("$corpus_abs")
if [[ -n "${FUZZ_LEDGER:-}" ]]; then
    fresh="$PWD/$out/new-inputs"; rm -rf "$fresh"; mkdir -p "$fresh"
    dirs=("$fresh" "$corpus_abs")  # libFuzzer writes new inputs to the first folder only
fi
cd "$out"
status=0
ASAN_OPTIONS=detect_leaks=0 "./fuzz-$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$PWD/" "${dirs[@]}" 2>"$PWD/last-run.log" || status=$?
tail -n 12 "$PWD/last-run.log" >&2
if [[ -n "${FUZZ_LEDGER:-}" ]]; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$PWD/last-run.log" | tail -n 1)
    printf '{"scenario":"libFuzzer: %s (committed corpus, then %s s)","kind":"check","runs":1,"faults":0,"objects_checked":0,"cases":%s,"secrets_found":0,"crashes":%s}\n' \
        "$name" "$seconds" "${runs:-0}" "$([[ $status -eq 0 ]] && echo 0 || echo 1)" >>"$FUZZ_LEDGER"
fi
exit "$status"
