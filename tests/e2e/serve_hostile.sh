#!/usr/bin/env bash
# mixseq serve against hostile HTTP clients (issue 29, section 5; tools/serve_hostile.py): a
# second server on a port in use fails instead of sharing it, chunked bodies over the limit are
# refused at the limit (memory stays flat), a Content-Length of -5 is a 400 that says so, clients
# that half-close after their request and pipelined requests are all answered and counted.
#   serve_hostile.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
python3 "$here/tools/serve_hostile.py" "$mixseq" "$work/model.pt" "$work/raw/valid.en" "$work"
echo "PASS: serve refuses a second bind, chunked floods, bad Content-Length; answers half-closed and pipelined clients"
