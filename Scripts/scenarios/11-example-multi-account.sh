#!/usr/bin/env bash
# The multi-account example (examples/multi-account) against the scenario server:
# two accounts, three devices, an account switch, clocks advanced per session. Then against a
# port nothing listens on: exit 2 with a message naming the URL and how to start a server,
# not curl's own error.
set -euo pipefail
EXAMPLE="$(dirname "$0")/../../examples/multi-account"
BASE=${BASE:?set BASE} "$EXAMPLE"

dead=http://127.0.0.1:1
status=0
said=$(BASE=$dead "$EXAMPLE" 2>&1 >/dev/null) || status=$?
if [ "$status" -ne 2 ] || [[ "$said" != *"no todaysim server answers at $dead"* ]] \
    || [[ "$said" != *"Scripts/run"* ]] || [[ "$said" == *"curl:"* ]]; then
    echo "  FAIL against $dead: exit $status, said: $said" >&2
    exit 1
fi
echo "  against $dead: exit 2, $(head -n 1 <<<"$said")"
