#!/usr/bin/python3
"""Writes golden.json beside this file: parameters after each of five NovoGrad steps, computed by
the reference's own optimizer, for tests/unit/optim/test_novograd.cpp.

  /usr/bin/python3 tests/data/novograd/make_golden.py [--jasper-dir D]

The reference is NVIDIA/DeepLearningExamples PyTorch/SpeechRecognition/Jasper common/optimizers.py,
class Novograd, imported unedited from the snapshot unpacked as ../shared/peers/README.md says
(default /tmp/peers/jasper/PyTorch/SpeechRecognition/Jasper, or $JASPER_DIR). Needs Debian's
python3-torch (/usr/bin/python3).

Three float32 parameter tensors, w [2, 3], b [3] and c [2], get fixed gradients (seeded normal
values at a different scale each step, so that the per-tensor norm falls and rises and AMSGrad's
maximum matters). Two quirks of the reference are exercised on purpose:
- b's first gradient is zero: exp_avg_sq stays 0, and the reference initialises it from the norm
  at the next step instead (its test is `exp_avg_sq == 0`, not "first step");
- c has no gradient at step 3 (p.grad is None): it is skipped, its state untouched.
The reference divides p.grad in place; each step here sets fresh gradient tensors, so that does
not leak into the next step.

Each case is one option set; the file holds the inputs and, per step, every parameter's values.
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5
SHAPES = {"w": [2, 3], "b": [3], "c": [2]}
SCALES = [1.0, 0.5, 2.0, 0.1, 0.8]  # gradient scale per step

# lr, betas, eps, weight_decay, grad_averaging, amsgrad: Jasper's train.py passes only lr and
# weight_decay (1e-3) and keeps the rest at the class's defaults, betas (0.95, 0), eps 1e-8.
CASES = [
    {"name": "jasper", "lr": 1e-2, "betas": [0.95, 0.0], "eps": 1e-8, "weight_decay": 1e-3,
     "grad_averaging": False, "amsgrad": False},
    {"name": "no_weight_decay", "lr": 1e-2, "betas": [0.95, 0.0], "eps": 1e-8, "weight_decay": 0.0,
     "grad_averaging": False, "amsgrad": False},
    {"name": "grad_averaging", "lr": 5e-2, "betas": [0.9, 0.98], "eps": 1e-8, "weight_decay": 1e-3,
     "grad_averaging": True, "amsgrad": False},
    {"name": "amsgrad", "lr": 5e-2, "betas": [0.95, 0.5], "eps": 1e-8, "weight_decay": 1e-2,
     "grad_averaging": False, "amsgrad": True},
    # eps large enough to show where it goes (sqrt(v) + eps, not sqrt(v + eps))
    {"name": "amsgrad_grad_averaging_eps", "lr": 1e-1, "betas": [0.8, 0.9], "eps": 0.3, "weight_decay": 1e-3,
     "grad_averaging": True, "amsgrad": True},
]


def values(t):
    return [float(x) for x in t.detach().flatten().tolist()]  # float32 -> double: exact


def inputs():
    g = torch.Generator().manual_seed(25)
    initial = {k: torch.randn(s, generator=g) for k, s in SHAPES.items()}
    grads = []
    for step, scale in enumerate(SCALES):
        step_grads = {k: torch.randn(s, generator=g) * scale for k, s in SHAPES.items()}
        if step == 0:
            step_grads["b"] = torch.zeros(SHAPES["b"])
        if step == 2:
            step_grads["c"] = None
        grads.append(step_grads)
    return initial, grads


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jasper-dir", default=os.environ.get(
        "JASPER_DIR", "/tmp/peers/jasper/PyTorch/SpeechRecognition/Jasper"))
    # the snapshot the committed file came from (common/optimizers.py last changed in 5b4165d5)
    parser.add_argument("--jasper-commit", default="NVIDIA/DeepLearningExamples 729963dd")
    args = parser.parse_args()

    sys.path.insert(0, args.jasper_dir)
    from common.optimizers import Novograd  # the reference, unedited
    sys.path.pop(0)

    initial, grads = inputs()
    out = {
        "about": "written by make_golden.py; see its header",
        "reference": args.jasper_commit + " PyTorch/SpeechRecognition/Jasper/common/optimizers.py Novograd",
        "torch": torch.__version__,
        "shapes": SHAPES,
        "initial": {k: values(v) for k, v in initial.items()},
        "grads": [{k: (None if v is None else values(v)) for k, v in step.items()} for step in grads],
        "cases": [],
    }
    for case in CASES:
        params = {k: v.clone().requires_grad_() for k, v in initial.items()}
        optimizer = Novograd(list(params.values()), lr=case["lr"], betas=tuple(case["betas"]), eps=case["eps"],
                             weight_decay=case["weight_decay"], grad_averaging=case["grad_averaging"],
                             amsgrad=case["amsgrad"])
        after = []
        for step_grads in grads:
            for k, p in params.items():
                p.grad = None if step_grads[k] is None else step_grads[k].clone()
            optimizer.step()
            after.append({k: values(p) for k, p in params.items()})
        out["cases"].append(dict(case, after=after))
        print(case["name"], "w after 5 steps:", [round(x, 6) for x in after[-1]["w"]])

    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
