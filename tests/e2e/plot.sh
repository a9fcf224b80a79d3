#!/usr/bin/env bash
# mixseq plot draws real runs' metrics.jsonl: a valid SVG with one curve per plotted series and
# run, as many points as the run logged, against updates or wall time; a damaged line is an error
# naming the file and line.
#   plot.sh <mixseq> <work dir>
set -euo pipefail
mixseq=$1
work=$2
source "$(dirname "$0")/small_task.sh"
make_small_task "$mixseq" "$work"
tiny_train_command "$mixseq" "$work"
train+=(--model.gnmt.hidden_size 16 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 6
        --train.log_interval 1 --train.validate_interval 2 --validation_search.max_len_a 1.5
        --validation_search.max_len_b 10)
fail() { echo "FAIL: $*"; exit 1; }
"${train[@]}" --train.run_dir "$work/a" 2>"$work/a.log" || fail "$(tail -3 "$work/a.log")"
"${train[@]}" --train.run_dir "$work/b" --optim.lr 0.02 2>"$work/b.log" || fail "$(tail -3 "$work/b.log")"
# fp16 needs a GPU: run b's records with the loss scale an fp16 run logs (halved at update 4).
python3 - "$work/b/metrics.jsonl" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
with open(sys.argv[1], "w") as out:
    for r in records:
        if r["kind"] == "train":
            r["loss_scale"] = 65536.0 if r["step"] < 4 else 32768.0
        out.write(json.dumps(r) + "\n")
PY

for x in updates time; do
  "$mixseq" plot "$work/a" "$work/b/metrics.jsonl" --x "$x" -o "$work/curves_$x.svg" 2>"$work/plot.log" ||
    fail "plot --x $x: $(tail -2 "$work/plot.log")"
  python3 - "$work/curves_$x.svg" "$work/a/metrics.jsonl" "$work/b/metrics.jsonl" <<'PY' || fail "plot --x $x"
import json, sys
import xml.etree.ElementTree as ET
svg, runs = sys.argv[1], sys.argv[2:]
root = ET.parse(svg).getroot()  # well-formed XML, or this raises
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
curves = {}
for line in root.iter("{http://www.w3.org/2000/svg}polyline"):
    key = (line.get("data-panel"), int(line.get("data-run")))
    assert key not in curves, f"two curves for {key}"
    curves[key] = len(line.get("points").split())
panels = {"train_loss": ("train", "loss"), "valid_loss": ("valid", "loss"), "valid_bleu": ("valid", "bleu"),
          "lr": ("train", "lr"), "gnorm": ("train", "gnorm"), "tgt_tok_per_s": ("train", "tgt_tok_per_s"),
          "loss_scale": ("train", "loss_scale")}
for run, path in enumerate(runs):
    records = [json.loads(line) for line in open(path)]
    for panel, (kind, key) in panels.items():
        expected = len({r["step"] for r in records if r["kind"] == kind and key in r})
        if expected == 0:
            assert (panel, run) not in curves, f"{panel} drawn for run {run} without data"
        else:
            assert curves.get((panel, run)) == expected, f"{panel} run {run}: {curves.get((panel, run))} points, want {expected}"
# Only run b has a loss scale.
assert ("loss_scale", 1) in curves and ("loss_scale", 0) not in curves, curves
assert sum(1 for k in curves if k[1] == 0) == 6 and sum(1 for k in curves if k[1] == 1) == 7, curves
print("ok", svg, len(curves), "curves")
PY
done

cp "$work/a/metrics.jsonl" "$work/damaged.jsonl"
sed -i '3s/.*/{"kind": "train", "step": 3,/' "$work/damaged.jsonl"
if "$mixseq" plot "$work/damaged.jsonl" -o "$work/no.svg" 2>"$work/damaged.log"; then fail "a damaged line was accepted"; fi
grep -q "damaged.jsonl:3: not a JSON object" "$work/damaged.log" || fail "$(tail -1 "$work/damaged.log")"
[ ! -e "$work/no.svg" ] || fail "a failed plot left a file"
printf '{"kind": "train", "st' >>"$work/a/metrics.jsonl"  # what a run killed mid-write leaves
"$mixseq" plot "$work/a" -o "$work/cut.svg" 2>"$work/cut.log" || fail "an unfinished last line: $(tail -1 "$work/cut.log")"
grep -q "skipping an unfinished last line" "$work/cut.log" || fail "no warning about the unfinished line"
echo "PASS: plot draws one curve per series and run from real runs, by updates and by time"
