#!/usr/bin/env bash
# The Node client's CI steps: install the locked dependencies, build, and
# run the tests against a governord built from this repository.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npm test
