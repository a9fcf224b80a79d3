#!/usr/bin/python3
"""Writes golden.json beside this file: a small fairseq fconv model's parameters, inputs, logits
and the gradients of a loss, for tests/unit/models/test_fconv.cpp (FconvGolden).

  OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 tests/data/fconv/make_golden.py [--peer-dir D]

The reference is facebookresearch/fairseq's fairseq/models/fconv.py (FConvEncoder, FConvDecoder),
imported unedited from the snapshot unpacked as ../shared/peers/README.md says (default
/tmp/peers/fairseq, or $FAIRSEQ_DIR), with ../shared/peers/fairseq_bench.py's import shims.

The model has every kind of layer spec: an even kernel, width changes (projections), a 1x1
convolution, no residual, a residual from two layers back, a decoder layer without attention.
fairseq's dictionary puts <pad> at 1 (mixseq: 0) and starts positions at pad + 1 = 2 (mixseq:
1); the test maps row p + 1 of fairseq's position tables to row p of mixseq's. Token ids are
otherwise the same (the first decoder input is 2, fairseq's </s> and mixseq's <s>). The sources
have no padding, so that pad ids never meet the model. Dropout 0.2 is off (eval mode) for the
logits; the gradients are of sum(logits * R) for a fixed random R, in eval mode too.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer-dir", default=os.environ.get("FAIRSEQ_DIR", "/tmp/peers/fairseq"))
    ap.add_argument("--peers", default=os.path.join(HERE, "../../../../shared/peers"))
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.peers))
    from fairseq_bench import install_shims, import_fairseq
    install_shims(os.environ.get("SACREBLEU_DIR", "/tmp/peers/sacrebleu"))
    sys.path.insert(0, os.path.abspath(args.peer_dir))
    import logging
    import warnings
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    import torch
    import_fairseq()
    from fairseq.data import Dictionary
    from fairseq.models.fconv import FConvEncoder, FConvDecoder, FConvModel

    torch.manual_seed(1)
    d = Dictionary()
    for i in range(24 - len(d)):
        d.add_symbol(f"w{i}")
    encoder = FConvEncoder(d, embed_dim=12, convolutions=eval("[(8, 3)] * 2 + [(10, 2)]"), dropout=0.2,
                           max_positions=32)
    decoder = FConvDecoder(d, embed_dim=12, convolutions=eval("[(8, 3), (10, 2), (10, 1, 0), (8, 4, 2)]"),
                           out_embed_dim=6, attention=[True, False, True, True], dropout=0.2, max_positions=32)
    model = FConvModel(encoder, decoder)
    model.eval()
    src = torch.randint(4, len(d), (3, 7))
    src[:, -1] = d.eos()
    prev = torch.randint(4, len(d), (3, 6))
    prev[:, 0] = d.eos()
    src_lengths = torch.full((3,), 7)
    logits, attn = model(src, src_lengths, prev)
    r = torch.randn_like(logits)
    (logits * r).sum().backward()
    out = {
        "vocab": len(d),
        "source": src.tolist(),
        "target_input": prev.tolist(),
        "logits": logits.detach().flatten().tolist(),
        "logits_shape": list(logits.shape),
        "attention": attn.detach().flatten().tolist(),
        "r": r.flatten().tolist(),
        "parameters": {name: {"shape": list(p.shape), "values": p.detach().flatten().tolist(),
                              "grad": p.grad.flatten().tolist()}
                       for name, p in model.named_parameters()},
    }
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(out, f)
    print("wrote", os.path.join(HERE, "golden.json"), "with", len(out["parameters"]), "parameters")


if __name__ == "__main__":
    main()
