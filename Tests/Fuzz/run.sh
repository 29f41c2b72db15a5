#!/bin/sh
# Builds the peer-answer fuzzer (libFuzzer + AddressSanitizer) from the sources that read HTTP answers, and runs it
# for a bounded time on the committed corpus, which it grows. Usage: Tests/Fuzz/run.sh [seconds] (default 60).
# A crash leaves crash-* next to the corpus and exits non-zero.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
out="$root/.build/fuzz"
mkdir -p "$out"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name PeerAnswerFuzz -o "$out/peer-answers" \
  "$root/Tests/Fuzz/PeerAnswerFuzz.swift" \
  "$root/Sources/HTTP/ResponseSink.swift" "$root/Sources/HTTP/RetryAfter.swift" "$root/Sources/HTTP/RetryPolicy.swift" \
  "$root/Sources/HTTP/PeerTextRedactor.swift" "$root/Sources/HTTP/HTTPRequest.swift" \
  "$root/Sources/Storage/JSONValue.swift" "$root/Sources/Storage/DeleteAnswer.swift" "$root/Sources/Storage/StorageError.swift" \
  "$root/Sources/Apple/AuthConfigAnswer.swift"
cd "$out"
"$out/peer-answers" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$root/Tests/Fuzz/" "$root/Tests/Fuzz/corpus/peer-answers"
