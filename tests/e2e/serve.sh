#!/usr/bin/env bash
# mixseq serve (issue 14) with real HTTP clients (tools/serve_check.py): the same translations
# as `mixseq translate`, 16 concurrent clients x 50 requests with nothing lost or mixed up and
# requests batched together, every kind of bad request refused with a JSON error while the server
# keeps running, and SIGTERM under load answering what is in flight, then exiting 0.
#   serve.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
cat "$work/raw/valid.en" "$work/raw/test.en" >"$work/sources.en"
"$mixseq" --threads 1 translate -c "$work/model.pt" --device cpu -i "$work/sources.en" --scores \
  -o "$work/expected.txt" 2>"$work/translate.log"
python3 "$here/tools/serve_check.py" "$mixseq" "$work/model.pt" "$work/sources.en" "$work/expected.txt" "$work"
echo "PASS: serve matches translate, 16 concurrent clients, bad requests, SIGTERM under load"
