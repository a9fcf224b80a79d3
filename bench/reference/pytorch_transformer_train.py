#!/usr/bin/python3
"""The PyTorch side of `mixseq bench train --model transformer`: the same shapes and the same
full training step (forward, label-smoothed loss per target token, backward, Adam), written with
torch.nn.Transformer as a PyTorch user would, so the two can be timed side by side on one
machine. Prints one JSON line like mixseq's.

  /usr/bin/python3 bench/reference/pytorch_transformer_train.py --threads 2   # Debian: python3-torch
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


class Seq2SeqTransformer(torch.nn.Module):
    """Post-norm encoder-decoder, one embedding shared by source, target and output (fairseq's
    share_all_embeddings), embeddings scaled by sqrt(d), sinusoidal positions."""

    def __init__(self, vocab, d_model, ffn, heads, layers):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d_model, padding_idx=0)
        torch.nn.init.normal_(self.embed.weight, 0, d_model ** -0.5)
        self.transformer = torch.nn.Transformer(d_model, heads, layers, layers, ffn, dropout=0.1, batch_first=True)
        self.scale = math.sqrt(d_model)
        positions = torch.arange(1024).unsqueeze(1)
        rates = torch.exp(torch.arange(d_model // 2) * -(math.log(10000.0) / (d_model // 2 - 1)))
        self.register_buffer("positions", torch.cat([torch.sin(positions * rates), torch.cos(positions * rates)], 1))

    def embed_tokens(self, tokens):
        return self.embed(tokens) * self.scale + self.positions[: tokens.size(1)]

    def forward(self, source, target_input):
        causal = self.transformer.generate_square_subsequent_mask(target_input.size(1))
        hidden = self.transformer(self.embed_tokens(source), self.embed_tokens(target_input), tgt_mask=causal)
        return hidden @ self.embed.weight.t()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=2000)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--ffn", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=30)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup-steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    model = Seq2SeqTransformer(args.vocab, args.d_model, args.ffn, args.heads, args.layers)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-8)
    words = lambda: torch.randint(4, args.vocab, (args.batch, args.seq_len))
    eos = torch.full((args.batch, 1), 3)
    bos = torch.full((args.batch, 1), 2)
    source = torch.cat([words(), eos], 1)
    target = words()
    target_input, target_output = torch.cat([bos, target], 1), torch.cat([target, eos], 1)

    def step():
        logits = model(source, target_input)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), target_output.reshape(-1), ignore_index=0,
                               label_smoothing=0.1, reduction="sum") / target_output.numel()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    for _ in range(args.warmup_steps):
        step()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "train", "implementation": "pytorch " + torch.__version__, "model": "transformer",
                      "params": sum(p.numel() for p in model.parameters()), "threads": args.threads,
                      "ms_per_step": seconds * 1e3 / args.steps,
                      "tok_per_s": target_output.numel() * args.steps / seconds,
                      "tok_per_s_counts": "target tokens, as fairseq"}))


if __name__ == "__main__":
    main()
