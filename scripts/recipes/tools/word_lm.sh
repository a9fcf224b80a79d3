#!/usr/bin/env bash
# A word n-gram language model in ARPA format for CTC beam search (`mixseq transcribe --lm`), built
# with irstlm (Witten-Bell smoothing), as the speech recipes use it:
#   word_lm.sh ORDER TEXT OUT.arpa
# TEXT holds one sentence per line. irstlm's files go beside OUT (OUT without .arpa, plus .se and
# .ilm.gz) and are replaced when the recipe runs again (irstlm refuses to write over its own output).
# Its messages go to OUT without .arpa plus .irstlm.log, and are printed when it fails.
set -euo pipefail
order=$1
text=$2
arpa=$3
base=${arpa%.arpa}
log=$base.irstlm.log
rm -f "$base.se" "$base.ilm.gz" "$arpa" "$log"
irstlm add-start-end <"$text" >"$base.se"
if ! { irstlm build-lm -i "$base.se" -n "$order" -k 1 -o "$base.ilm.gz" &&
       irstlm compile-lm "$base.ilm.gz" --text=yes "$arpa"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "word_lm.sh: irstlm could not build the $order-gram model of '$text' (its messages above, also in $log)" >&2
  exit 1
fi
