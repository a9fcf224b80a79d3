#!/usr/bin/env bash
# mixseq serve under load (docs/benchmarks.md): for the GNMT and Transformer bench shapes
# (GNMT hidden 256 x 4 layers; Transformer d_model 256, ffn 1024, 4 heads, 3+3 layers; the
# task's words padded to a multiple of 2000 entries, 6000 here),
# trains a model for a few hundred updates on the built-in task (so that
# it stops its translations as the task's do, rather than running every hypothesis to its
# length limit), serves it, and runs bench/serve_load.py at 1, 4 and 16 clients with one
# sentence a request. JSON lines to stdout. Training runs under nice (it is setup, not measured).
#   bench/serve_load.sh                       # both models, 20 s per client count
#   MODELS=gnmt SECONDS_EACH=10 THREADS=2 bench/serve_load.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mixseq=${MIXSEQ:-$here/build/bin/mixseq}
work=${WORK:-$(mktemp -d)}
models=${MODELS:-gnmt transformer}
seconds=${SECONDS_EACH:-20}
threads=${THREADS:-0}  # the model's CPU threads (mixseq --threads); 0 follows the load
updates=${UPDATES:-300}

"$mixseq" synth -o "$work/raw" --train-size 4000 --valid-size 20 --test-size 200 2>/dev/null
"$mixseq" prepare --train "$work/raw/train" --valid "$work/raw/valid" -o "$work/data" --tokenizer none \
  --vocab-pad-to-multiple 2000 >/dev/null 2>&1
gnmt=(--model.arch gnmt --model.gnmt.hidden_size 256 --model.gnmt.num_layers 4)
transformer=(--model.arch transformer --model.transformer.embed_dim 256 --model.transformer.ffn_dim 1024
             --model.transformer.heads 4 --model.transformer.encoder_layers 3 --model.transformer.decoder_layers 3)
for model in $models; do
  shape="$model[@]"
  nice "$mixseq" --threads "$threads" train --train.device cpu --data.dir "$work/data" --data.max_tokens 1024 "${!shape}" \
    --optim.lr 2e-3 --schedule.name gnmt_step --schedule.gnmt_step.warmup_steps 50 --clipping.max_norm 5 \
    --train.max_epochs 0 --train.max_steps "$updates" --train.run_dir "$work/$model" --train.validate_bleu false \
    --validation_search.beam_size 4 --validation_search.max_len_a 1.5 --validation_search.max_len_b 10 \
    2>"$work/$model.train.log"
  "$mixseq" --threads "$threads" serve -c "$work/$model/checkpoint_best.pt" --device cpu --port 0 \
    >"$work/$model.serve.out" 2>"$work/$model.serve.log" &
  server=$!
  until grep -q "listening on" "$work/$model.serve.out" 2>/dev/null; do
    kill -0 $server 2>/dev/null || { cat "$work/$model.serve.log"; exit 1; }
    sleep 0.2
  done
  port=$(sed -n 's|^serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/$model.serve.out")
  python3 "$here/bench/serve_load.py" --port "$port" --sources "$work/raw/test.en" --seconds "$seconds" \
    --label "$model beam 4, threads $threads"
  kill -TERM $server
  wait $server
done
