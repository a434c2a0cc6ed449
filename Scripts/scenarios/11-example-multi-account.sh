#!/usr/bin/env bash
# The multi-account example (Scripts/examples/multi-account) against the scenario server:
# two accounts, three devices, an account switch, clocks advanced per session.
set -euo pipefail
BASE=${BASE:?set BASE} "$(dirname "$0")/../examples/multi-account"
