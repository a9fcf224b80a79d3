#!/usr/bin/env bash
# mixseq serve's page, GET / (issue 28): self-contained HTML with a text box; in headless Chromium
# (when Debian's chromium and chromium-driver are installed; otherwise the browser half is skipped,
# exit 77) typing shows mixseq translate's translations and the metrics line fills in.
#   serve_page.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
"$mixseq" --threads 1 translate -c "$work/model.pt" --device cpu -i "$work/raw/test.en" -o "$work/expected.txt" \
  2>"$work/translate.log"
python3 "$here/tools/serve_page_check.py" "$mixseq" "$work/model.pt" "$work/raw/test.en" "$work/expected.txt" "$work"
