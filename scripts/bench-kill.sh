#!/usr/bin/env bash
# bench-kill.sh — the kill loop at length: TestKillLoop (cmd/ddtsim) with
# KILLS SIGKILLs (CI sends 50) of a real ddtsim saving the golden inputs
# with a checkpoint every 10 ms, each killed run resumed, every episode's
# final zdb -S text compared byte for byte with real ZFS's; RACE=1 builds
# with the race detector.
#
# Usage: scripts/bench-kill.sh [KILLS]     default 500
set -euo pipefail
kills=${1:-500}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
race=()
[[ -n ${RACE:-} ]] && race=(-race)
DDTSIM_KILLS=$kills go test "${race[@]}" -count=1 -timeout 2h -run '^TestKillLoop$' -v ./cmd/ddtsim/ | grep -E 'kills|^(ok|FAIL|---)'
