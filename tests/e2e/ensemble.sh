#!/usr/bin/env bash
# Ensembles (issue 14): `-c A -c B` averages the models' log-probabilities in translate, score
# and serve. A model ensembled with itself translates as it does alone; the ensemble of two
# models translates otherwise, and score -c A -c B gives back the ensemble search's own scores
# (its forward and its steps agree); serve -c A -c B answers what translate -c A -c B writes;
# models of different vocabularies are refused, naming the checkpoint.
#   ensemble.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
here=$(dirname "$0")
source "$here/small_task.sh"
make_tiny_translation_model "$mixseq" "$work"
fail() { echo "FAIL: $*"; exit 1; }
"${train[@]}" --model.gnmt.hidden_size 32 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 300 \
  --optim.lr 5e-3 --train.seed 7 --train.run_dir "$work/run_b" 2>"$work/train_b.log" || fail "$(tail -3 "$work/train_b.log")"
a=$work/model.pt
b=$work/run_b/checkpoint_best.pt
src=$work/raw/test.en
translate() { "$mixseq" --threads 1 translate --device cpu -i "$src" "$@" 2>>"$work/commands.log"; }

translate -c "$a" >"$work/a.hyp"
translate -c "$a" -c "$a" >"$work/aa.hyp"
cmp -s "$work/a.hyp" "$work/aa.hyp" || fail "a model ensembled with itself translates otherwise than alone"
grep -q "beam 3," "$work/commands.log" || fail "the ensemble did not take the first checkpoint's stored search"
translate -c "$b" >"$work/b.hyp"
translate -c "$a" -c "$b" >"$work/ab.hyp"
cmp -s "$work/ab.hyp" "$work/a.hyp" && cmp -s "$work/ab.hyp" "$work/b.hyp" && fail "the ensemble translates as each member; the test cannot see the averaging"
[ "$(wc -l <"$work/ab.hyp")" -eq 20 ] || fail "the ensemble wrote $(wc -l <"$work/ab.hyp") lines for 20"

translate -c "$a" -c "$b" --beam-size 1 --length-penalty 0 --coverage-penalty 0 --scores >"$work/ab_greedy.txt"
awk -F' \\|\\|\\| ' '{ print $2 }' "$work/ab_greedy.txt" >"$work/ab_greedy.hyp"
"$mixseq" --threads 1 score -c "$a" -c "$b" --device cpu -s "$src" -t "$work/ab_greedy.hyp" >"$work/ab.forced" 2>>"$work/commands.log"
paste <(awk -F' \\|\\|\\| ' '{ print $3 }' "$work/ab_greedy.txt") "$work/ab.forced" |
  awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-3 + 1e-5 * ($1 < 0 ? -$1 : $1)) { print "FAIL: ensemble search vs score, line " NR ": " $0; bad = 1 } } END { exit bad }'

# (scores are printed with 6 significant digits: the tolerance grows with them)
# serve -c A -c B: one request with every test sentence, answered as translate -c A -c B wrote.
"$mixseq" --threads 1 serve -c "$a" -c "$b" --device cpu --port 0 >"$work/serve.out" 2>"$work/serve.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q "listening on" "$work/serve.out" && break; sleep 0.1; done
port=$(sed -n 's|^serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/serve.out")
[ -n "$port" ] || fail "serve -c A -c B did not start: $(tail -3 "$work/serve.log")"
python3 - "$port" "$src" >"$work/ab_served.hyp" <<'PY'
import json, sys, urllib.request
sources = open(sys.argv[2], encoding="utf-8").read().splitlines()
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/translate", json.dumps({"src": sources}).encode(),
                                 {"Content-Type": "application/json"})
print("\n".join(json.load(urllib.request.urlopen(request, timeout=60))["tgt"]))
PY
kill -TERM $server && wait $server || fail "serve -c A -c B did not exit 0 on SIGTERM"
trap - EXIT
cmp -s "$work/ab.hyp" "$work/ab_served.hyp" || fail "serve -c A -c B answers otherwise than translate -c A -c B"

# 100 training pairs instead of 400: fewer words, another vocabulary.
"$mixseq" synth -o "$work/other/raw" --train-size 100 --valid-size 5 --test-size 5 2>/dev/null
"$mixseq" prepare --train "$work/other/raw/train" --valid "$work/other/raw/valid" -o "$work/other/data" \
  --tokenizer none >/dev/null 2>&1
tiny_train_command "$mixseq" "$work/other"
"${train[@]}" --model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 2 \
  --train.run_dir "$work/other/run" 2>"$work/other/train.log" || fail "$(tail -3 "$work/other/train.log")"
if translate -c "$a" -c "$work/other/run/checkpoint_best.pt" >/dev/null; then fail "an ensemble of two vocabularies was accepted"; fi
grep -q "run/checkpoint_best.pt' has another vocabulary than '$a'" "$work/commands.log" ||
  fail "the vocabulary mismatch error does not name both checkpoints: $(tail -1 "$work/commands.log")"
echo "PASS: ensembles in translate, score and serve"
