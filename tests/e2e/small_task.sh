# Sourced by the end-to-end scripts: a fresh <work> holding a small built-in task, written by
# `mixseq synth` (400/20/20 pairs in <work>/raw) and prepared without subwords (<work>/data).
#   make_small_task <mixseq> <work dir>
make_small_task() {
  rm -rf "$2" && mkdir -p "$2"
  "$1" synth -o "$2/raw" --train-size 400 --valid-size 20 --test-size 20
  "$1" prepare --train "$2/raw/train" --valid "$2/raw/valid" -o "$2/data" --tokenizer none >/dev/null
}

# Sets the array `train` to the start of a one-thread CPU `mixseq train` command on that task
# (<work>/data, 256-token batches); each script appends the model and loop it needs.
#   tiny_train_command <mixseq> <work dir>
tiny_train_command() {
  train=("$1" --threads 1 train --train.device cpu --data.dir "$2/data" --data.max_tokens 256)
}

# The small task's English side as a language-model corpus (<work>/lm: 2,000 training lines of
# number words, 100 validation lines), prepared word by word.
#   make_small_lm_task <mixseq> <work dir>
make_small_lm_task() {
  rm -rf "$2" && mkdir -p "$2"
  "$1" synth -o "$2/raw" --train-size 2000 --valid-size 100 --test-size 1
  "$1" prepare --source-lang en --target-lang "" --train "$2/raw/train" --valid "$2/raw/valid" -o "$2/data" \
    --tokenizer none --vocab-pad-to-multiple 1 >/dev/null
}

# Sets the array `train` to a one-thread CPU `mixseq train` command of a tiny Transformer-XL on
# that corpus (2 layers of 32, segments and memory of 16 tokens, 8 streams, an adaptive softmax
# with one tail cluster).
#   tiny_lm_train_command <mixseq> <work dir>
tiny_lm_train_command() {
  train=("$1" --threads 1 train --train.device cpu --data.dir "$2/data" --model.arch transformer_xl
         --model.transformer_xl.n_layer 2 --model.transformer_xl.d_model 32 --model.transformer_xl.n_head 2
         --model.transformer_xl.d_head 16 --model.transformer_xl.d_inner 64 --model.transformer_xl.mem_len 16
         --model.transformer_xl.cutoffs "[20]" --lm.batch_size 8 --lm.tgt_len 16 --lm.eval_tgt_len 16
         --optim.lr 2e-3 --schedule.name cosine --schedule.cosine.warmup_steps 20 --schedule.cosine.eta_min 0
         --train.max_epochs 0)
}

# "<update> <loss>" for each update logged in a metrics.jsonl, the last logged one where a resumed
# run logged an update again.
#   logged_losses <metrics.jsonl>
logged_losses() {
  sed -n 's/.*"kind":"train".*"loss":\([^,}]*\).*"step":\([0-9]*\).*/\2 \1/p' "$1" |
    awk '{ loss[$1] = $2 } END { for (s in loss) print s, loss[s] }' | sort -n
}

# Trains a small GNMT on that task for the translation and serving tests, in a few seconds (it
# learns little, but its outputs differ by sentence); <work>/model.pt is its best checkpoint. Its
# validation_search (beam 3, at most 1.5 * source length + 10 tokens) differs from the search
# defaults, so a test can tell which one a command used.
#   make_tiny_translation_model <mixseq> <work dir>
make_tiny_translation_model() {
  make_small_task "$1" "$2" >/dev/null
  tiny_train_command "$1" "$2"
  "${train[@]}" --model.gnmt.hidden_size 32 --model.gnmt.num_layers 2 --train.max_epochs 0 --train.max_steps 400 \
    --optim.lr 5e-3 --train.run_dir "$2/run" --validation_search.beam_size 3 --validation_search.max_len_a 1.5 \
    --validation_search.max_len_b 10 2>"$2/train.log" || { tail -5 "$2/train.log"; return 1; }
  cp "$2/run/checkpoint_best.pt" "$2/model.pt"
}

# Sets the array `train` to a one-thread CPU `mixseq train` command of a tiny LSTM language model
# on that corpus (2 layers of 48, word vectors of 32 tied to the output through a projection,
# every dropout and weight drop on, 8 streams of 16-token segments).
#   tiny_lstm_lm_train_command <mixseq> <work dir>
tiny_lstm_lm_train_command() {
  train=("$1" --threads 1 train --train.device cpu --data.dir "$2/data" --model.arch lstm_lm
         --model.lstm_lm.embed_dim 32 --model.lstm_lm.hidden_size 48 --model.lstm_lm.num_layers 2
         --model.lstm_lm.tie_weights true --model.lstm_lm.dropout_embed 0.1 --model.lstm_lm.dropout_hidden 0.1
         --model.lstm_lm.dropout_output 0.1 --model.lstm_lm.weight_drop 0.2
         --lm.batch_size 8 --lm.tgt_len 16 --lm.eval_tgt_len 16
         --optim.lr 3e-3 --schedule.name cosine --schedule.cosine.warmup_steps 20 --schedule.cosine.eta_min 0
         --clipping.max_norm 0.25 --train.max_epochs 0)
}

# Sets the array `train` to a one-thread CPU `mixseq train` command of a tiny ConvS2S (fconv: 2+2
# layers of 32, kernel 3, dropout 0.1) with fairseq's recipe: NAG at a constant lr 0.25, momentum
# 0.99, gradients clipped to 0.1, on the small task's data.
#   tiny_fconv_train_command <mixseq> <work dir>
tiny_fconv_train_command() {
  train=("$1" --threads 1 train --train.device cpu --data.dir "$2/data" --data.max_tokens 512 --model.arch fconv
         --model.fconv.encoder_embed_dim 32 --model.fconv.decoder_embed_dim 32 --model.fconv.decoder_out_embed_dim 32
         --model.fconv.encoder_layers "[(32, 3)] * 2" --model.fconv.decoder_layers "[(32, 3)] * 2"
         --model.fconv.dropout 0.1 --optim.name nag --optim.lr 0.25 --optim.momentum 0.99 --clipping.max_norm 0.1
         --schedule.name constant --train.max_epochs 0)
}
