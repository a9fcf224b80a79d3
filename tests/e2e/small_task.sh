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
