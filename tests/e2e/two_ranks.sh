# Sourced by the data-parallel end-to-end scripts, after the array `train` and $work are set.
# A port no socket on this machine uses (listening, connected or in TIME_WAIT, per /proc/net/tcp*):
# a random one once collided with another test's and rank 0 could not bind it.
free_port() {
  local candidate
  while :; do
    candidate=$((20000 + RANDOM % 20000))
    grep -qi "$(printf ':%04X ' "$candidate")" /proc/net/tcp /proc/net/tcp6 2>/dev/null || break
  done
  echo "$candidate"
}
port=$(free_port)

# Starts rank $1 of 2 in the background, logging to $work/$2.rank$1.log; the rest are train overrides.
start_rank() {
  local rank=$1 name=$2
  shift 2
  RANK=$rank WORLD_SIZE=2 LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "${train[@]}" "$@" 2>"$work/$name.rank$rank.log" &
}
# Also stops the ranks still running, which would otherwise wait out their group timeout.
fail() {
  echo "FAIL: $*"
  kill $(jobs -p) 2>/dev/null || true
  exit 1
}

# Per update, the loss logged in a run's metrics.jsonl.
losses() { sed -n 's/.*"kind":"train".*"loss":\([^,}]*\).*"step":\([0-9]*\).*/\2 \1/p' "$1"; }
valid_loss() { sed -n 's/.*"kind":"valid".*"loss":\([^,}]*\).*/\1/p' "$1" | tail -1; }
same_numbers() {  # two files of "step value" lines, values within a relative 1e-4
  paste "$1" "$2" | awk '{ if ($1 != $3) bad = 1; d = $2 - $4; if (d < 0) d = -d;
                           if (d > 1e-4 * ($2 < 0 ? -$2 : $2) + 1e-6) bad = 1 } END { exit bad || NR == 0 }'
}
