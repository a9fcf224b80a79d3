#!/usr/bin/python3
"""Writes golden.pt beside this file: tiny Transformer-XL models of the paper's code
(kimiyoung/transformer-xl, pytorch/mem_transformer.py, MemTransformerLM with attn_type 0), their
weights under mixseq's parameter names, two consecutive segments of random ids with the per-token
losses and the memories the reference computes, and the gradients of the first segment's summed
loss. tests/unit/models/test_transformer_xl_golden.cpp loads the weights into mixseq's
TransformerXlModel and checks that it computes the same numbers.

  /usr/bin/python3 tests/data/transformer_xl/make_golden.py [--peer-dir /tmp/peers/transformer-xl]

Needs Debian's python3-torch and the reference unpacked as ../shared/peers/README.md says. The
reference is imported, not copied or edited; as ../shared/peers/txl_bench.py does, torch.version.cuda
is set while proj_adaptive_softmax imports (it parses it at import time on a CPU-only torch).
The cases below must match kCases in the C++ test.
"""
import argparse
import os
import sys

import torch

CASES = {
    # adaptive input and softmax, one matrix per cluster, tied weights and tail projections, post-norm
    "adaptive_div2": dict(n_token=60, n_layer=2, n_head=2, d_model=12, d_head=5, d_inner=20, d_embed=16,
                          div_val=2, cutoffs=[20, 40], tie_weight=True, tie_projs=[False, True, True],
                          pre_lnorm=False, same_length=False, clamp_len=-1, mem_len=5),
    # one matrix with projections, untied output vectors, pre_lnorm, same_length, clamp_len
    "projected_div1": dict(n_token=60, n_layer=2, n_head=3, d_model=10, d_head=4, d_inner=16, d_embed=14,
                           div_val=1, cutoffs=[30], tie_weight=False, tie_projs=[False, True],
                           pre_lnorm=True, same_length=True, clamp_len=3, mem_len=6),
    # the bench's kind: full tied softmax, no projections
    "full_softmax": dict(n_token=50, n_layer=3, n_head=2, d_model=8, d_head=4, d_inner=12, d_embed=8,
                         div_val=1, cutoffs=[], tie_weight=True, tie_projs=[False],
                         pre_lnorm=False, same_length=False, clamp_len=-1, mem_len=4),
}
BATCH, TGT_LEN, SEGMENTS, FIRST_ID = 3, 4, 2, 4  # ids from 4: mixseq's special symbols score 0


def their_names_to_ours(name):
    """kimiyoung's state_dict keys -> mixseq's registered names (None: not a parameter of ours)."""
    parts = name.split(".")
    if parts[0] == "word_emb":   # word_emb.emb_layers.<i>.weight, word_emb.emb_projs.<i>
        return f"embedding.weight_{parts[2]}" if parts[1] == "emb_layers" else f"embedding.projection_{parts[2]}"
    if parts[0] == "crit":       # crit.out_layers.<i>.weight|bias, crit.out_projs.<i>, crit.cluster_*
        if parts[1] == "out_layers":
            return f"softmax.{parts[3]}_{parts[2]}"
        if parts[1] == "out_projs":
            return f"softmax.projection_{parts[2]}"
        return f"softmax.{parts[1]}"
    if parts[0] == "layers":     # layers.<l>.dec_attn.* and layers.<l>.pos_ff.*
        layer, block, rest = parts[1], parts[2], parts[3:]
        if block == "dec_attn":
            if rest[0] == "layer_norm":
                return f"layers.{layer}.attn_layer_norm.{rest[1]}"
            return f"layers.{layer}.attn.{'.'.join(rest)}"
        if rest[0] == "layer_norm":
            return f"layers.{layer}.ff_layer_norm.{rest[1]}"
        return f"layers.{layer}.{'fc1' if rest[1] == '0' else 'fc2'}.{rest[2]}"
    if parts[0] in ("r_w_bias", "r_r_bias"):
        return name
    return None                  # pos_emb.inv_freq, a buffer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peer-dir", default=os.environ.get("TXL_DIR", "/tmp/peers/transformer-xl"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.pt"))
    args = ap.parse_args()
    pydir = os.path.join(args.peer_dir, "pytorch")
    sys.path[:0] = [pydir, os.path.join(pydir, "utils")]
    saved_cuda = torch.version.cuda
    torch.version.cuda = torch.version.cuda or "10.0"
    try:
        from mem_transformer import MemTransformerLM
    finally:
        torch.version.cuda = saved_cuda

    torch.manual_seed(12)
    fixture = {}
    for case, c in CASES.items():
        model = MemTransformerLM(
            c["n_token"], c["n_layer"], c["n_head"], c["d_model"], c["d_head"], c["d_inner"], dropout=0.0,
            dropatt=0.0, tie_weight=c["tie_weight"], d_embed=c["d_embed"], div_val=c["div_val"],
            tie_projs=c["tie_projs"], pre_lnorm=c["pre_lnorm"], tgt_len=TGT_LEN, ext_len=0, mem_len=c["mem_len"],
            cutoffs=list(c["cutoffs"]), same_length=c["same_length"], attn_type=0, clamp_len=c["clamp_len"])
        model.crit.keep_order = True  # per-token losses in the targets' order, as mixseq returns them
        # Weights far from the reference's small init, so that every part of the model shows in the losses.
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.normal_(1.0 if "layer_norm.weight" in name else 0.0, 0.3)
        names = {}  # named_parameters() lists a tied tensor once, under the embedding's name (registered first)
        for name, p in model.named_parameters():
            names[id(p)] = their_names_to_ours(name)
            fixture[f"{case}.param.{names[id(p)]}"] = p.detach().clone()
        stream = torch.randint(FIRST_ID, c["n_token"], (BATCH, SEGMENTS * TGT_LEN + 1))
        mems = tuple()
        for k in range(SEGMENTS):
            data = stream[:, k * TGT_LEN:(k + 1) * TGT_LEN]
            target = stream[:, k * TGT_LEN + 1:(k + 1) * TGT_LEN + 1]
            model.zero_grad()
            ret = model(data.t().contiguous(), target.t().contiguous(), *mems)  # the reference's [T, B]
            loss, mems = ret[0], tuple(ret[1:])
            if k == 0:
                loss.sum().backward()
                for p in model.parameters():
                    fixture[f"{case}.grad.{names[id(p)]}"] = p.grad.detach().clone()
            fixture[f"{case}.seg{k}.tokens"] = data.clone()                  # [B, T]
            fixture[f"{case}.seg{k}.targets"] = target.clone()               # [B, T]
            fixture[f"{case}.seg{k}.nll"] = loss.detach().t().contiguous()   # [B, T]
            for i in range(c["n_layer"]):  # the reference keeps n_layer + 1; the last is never read
                fixture[f"{case}.seg{k}.memory{i}"] = mems[i].transpose(0, 1).contiguous()  # [B, M, D]
    torch.save(fixture, args.out)
    print(f"wrote {len(fixture)} tensors to {args.out} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
