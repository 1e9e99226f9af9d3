#!/bin/sh
# Builds governord and governor as static binaries, as the Dockerfile does:
#   deploy/build-static.sh OUTDIR
# No cgo (the SQLite driver is pure Go), no paths of this machine in the
# binaries, no symbol tables.
set -eu
out=${1:?usage: deploy/build-static.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/" ./cmd/governord ./cmd/governor
