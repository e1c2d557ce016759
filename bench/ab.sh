#!/usr/bin/env bash
# Interleaved A/B of `npm run bench` between two commits, on this machine: these machines move up to 2×
# between identical runs, so one before/after pair proves nothing. Each commit is checked out in a worktree
# of its own (with its own `npm ci`), and the rounds alternate which of the two runs first.
#
#   bash bench/ab.sh <base-ref> <head-ref> [rounds=4]
#
# Run it on a quiet machine (no tests, no builds). It ends with the medians of both sides
# (bench/ab-summary.ts): p50, rate and CPU per job of each row of sections A and B.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bash bench/ab.sh <base-ref> <head-ref> [rounds]}
head=${2:?usage: bash bench/ab.sh <base-ref> <head-ref> [rounds]}
rounds=${3:-4}
work=$(mktemp -d "${TMPDIR:-/tmp}/ratchet-ab-XXXXXX")
out="$work/results"
mkdir -p "$out"
cleanup() {
  git worktree remove --force "$work/base" 2>/dev/null || true
  git worktree remove --force "$work/head" 2>/dev/null || true
}
trap cleanup EXIT
for side in base head; do
  ref=$base
  [[ $side == head ]] && ref=$head
  git worktree add --quiet --detach "$work/$side" "$ref"
  (cd "$work/$side" && npm ci --no-audit --no-fund --silent)
done
for round in $(seq 1 "$rounds"); do
  order="base head"
  (( round % 2 == 0 )) && order="head base"
  for side in $order; do
    echo "== round $round: $side"
    (cd "$work/$side" && BENCH_TAKEOVERS=${BENCH_TAKEOVERS:-1} BENCH_LONG_ITERATIONS=${BENCH_LONG_ITERATIONS:-10} \
      BENCH_SCALING_RUNS=${BENCH_SCALING_RUNS:-5} npx tsx bench/run.ts > "$out/$side-$round.txt" 2>&1)
  done
done
npx tsx bench/ab-summary.ts "$out"
echo "(each run's output: $out)"
trap - EXIT
cleanup
