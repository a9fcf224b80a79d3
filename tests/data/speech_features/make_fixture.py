#!/usr/bin/python3
"""Writes fixture.json beside this file: speech features computed by the reference front ends'
own code, for tests/unit/audio/test_speech_features.cpp.

  /usr/bin/python3 tests/data/speech_features/make_fixture.py [--jasper-dir D] [--ds2-dir D]

- log_mel: NVIDIA/DeepLearningExamples PyTorch/SpeechRecognition/Jasper common/features.py,
  FilterbankFeatures with configs/jasper10x5dr_speedp-online_speca.yaml's settings (hann, n_fft 512,
  64 filters, per_feature, pad_align 16), dither 0 so that it is deterministic. The module is
  imported unedited; `librosa` is a stand-in whose filters.mel is torchaudio's melscale_fbanks with
  Slaney's scale and area normalisation, checked here against a NumPy port of librosa's own
  librosa.filters.mel(htk=False, norm='slaney').
- log_spectrogram: mlcommons/training retired_benchmarks/never-adopted/speech_recognition
  data/data_loader.py, SpectrogramParser(normalize=True).parse_audio with params.py's settings
  (16 kHz, 20 ms hamming window, 10 ms hop), imported unedited. Its librosa.stft is a NumPy port of
  librosa 0.6's stft (centre=True with np.pad(..., mode='reflect'): the benchmark's Python 2.7 image
  installs an unpinned librosa, which was 0.6/0.7 then; 'constant' padding became the default only
  in librosa 0.10), librosa.magphase is |D| and its phase, scipy.signal.hamming is NumPy's (scipy's
  sym=True default; librosa calls a callable window with the length only, so DS2's window is the
  symmetric Hamming window), and load_audio returns the fixture's samples.

It also records where Jasper's SpecAugment puts its masks for three seeds.

Needs Debian's python3-torch, python3-torchaudio and python3-numpy, and the two references
unpacked as ../shared/peers/README.md says (default: /tmp/peers/jasper, /tmp/peers/ds2).
The input is a deterministic 16 kHz signal (a chirp, three sines and seeded noise), stored as
16-bit integers so that C++ reads exactly the samples the references saw (value / 32768).
"""
import argparse
import json
import math
import os
import sys
import types

import numpy as np
import torch
import torchaudio

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE_RATE = 16000
N_FFT = 512
N_MELS = 64
# 4000 samples is a multiple of the 160-sample hop (the reference's valid frames, ceil(N / hop),
# are one fewer than the STFT's 1 + N / hop); 4073 is not.
LENGTHS = [4000, 4073]


def signal():
    t = np.arange(max(LENGTHS)) / SAMPLE_RATE
    duration = max(LENGTHS) / SAMPLE_RATE
    chirp = np.sin(2 * np.pi * (100 * t + (4000 - 100) / (2 * duration) * t * t))
    sines = sum(a * np.sin(2 * np.pi * f * t) for a, f in [(0.3, 440), (0.2, 1000), (0.1, 3000)])
    noise = np.random.RandomState(25).standard_normal(t.size) * 0.01
    x = 0.4 * chirp + sines + noise
    x *= np.hanning(x.size) ** 0.25  # a fade in and out, so frames differ in loudness
    return np.clip(np.round(x * 0.5 * 32768), -32768, 32767).astype(np.int64)


# NumPy port of librosa.filters.mel (librosa 0.6 .. 0.10, htk=False, norm='slaney'/1).
def librosa_hz_to_mel(f):
    f = np.asanyarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz, min_log_mel, logstep = 1000.0, 1000.0 / f_sp, np.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, mels)


def librosa_mel_to_hz(m):
    m = np.asanyarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, min_log_mel, logstep = 1000.0, 1000.0 / f_sp, np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def librosa_mel(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    fmax = sr / 2 if fmax is None else fmax
    weights = np.zeros((n_mels, 1 + n_fft // 2), dtype=np.float32)
    fftfreqs = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_f = librosa_mel_to_hz(np.linspace(librosa_hz_to_mel(fmin), librosa_hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, np.newaxis]
    return weights


def torchaudio_mel(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    fmax = sr / 2 if fmax is None else fmax
    fb = torchaudio.functional.melscale_fbanks(n_fft // 2 + 1, fmin, fmax, n_mels, sr, norm="slaney",
                                               mel_scale="slaney")  # [n_freqs, n_mels]
    return fb.t().numpy()


# NumPy port of librosa 0.6's core.stft (the numbers, not its block loop).
def librosa_stft(y, n_fft=2048, hop_length=None, win_length=None, window="hann", center=True,
                 dtype=np.complex64, pad_mode="reflect"):
    win_length = n_fft if win_length is None else win_length
    hop_length = win_length // 4 if hop_length is None else hop_length
    assert callable(window), "the DS2 loader passes scipy.signal.<window>"
    fft_window = np.asarray(window(win_length))       # filters.get_window: a callable gets Nx only
    lpad = (n_fft - win_length) // 2                   # util.pad_center
    fft_window = np.pad(fft_window, (lpad, n_fft - win_length - lpad), mode="constant").reshape(-1, 1)
    if center:
        y = np.pad(y, int(n_fft // 2), mode=pad_mode)
    n_frames = 1 + (len(y) - n_fft) // hop_length     # util.frame
    frames = np.stack([y[i * hop_length:i * hop_length + n_fft] for i in range(n_frames)], axis=1)
    return np.fft.rfft(fft_window * frames, axis=0).astype(dtype)


def install_stand_ins():
    librosa = types.ModuleType("librosa")
    librosa.filters = types.SimpleNamespace(
        mel=lambda sr, n_fft, n_mels=128, fmin=0.0, fmax=None: torchaudio_mel(sr, n_fft, n_mels, fmin, fmax))
    librosa.stft = librosa_stft
    librosa.magphase = lambda D, power=1: (np.abs(D) ** power, np.exp(1j * np.angle(D)))
    librosa.util = types.SimpleNamespace(find_files=lambda *a, **k: [])
    sys.modules["librosa"] = librosa

    def hamming(M, sym=True):
        return np.hamming(M) if sym else np.hamming(M + 1)[:-1]

    def hann(M, sym=True):
        return np.hanning(M) if sym else np.hanning(M + 1)[:-1]

    scipy = types.ModuleType("scipy")
    scipy.signal = types.SimpleNamespace(hamming=hamming, hann=hann, blackman=np.blackman, bartlett=np.bartlett)
    sys.modules["scipy"] = scipy
    sys.modules["scipy.signal"] = scipy.signal


def rounded(array, digits):
    return [[float("%.*g" % (digits, v)) if v != 0 else 0 for v in row] for row in np.asarray(array, np.float64)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jasper-dir", default=os.environ.get(
        "JASPER_DIR", "/tmp/peers/jasper/PyTorch/SpeechRecognition/Jasper"))
    parser.add_argument("--ds2-dir", default=os.environ.get(
        "DS2_DIR", "/tmp/peers/ds2/retired_benchmarks/never-adopted/speech_recognition"))
    # the snapshots the committed fixture came from (features.py last changed in 8ed53a45)
    parser.add_argument("--jasper-commit", default="NVIDIA/DeepLearningExamples 729963dd")
    parser.add_argument("--ds2-commit", default="mlcommons/training aa344c7f")
    args = parser.parse_args()
    install_stand_ins()

    # torchaudio's filterbank stands in for librosa's in the reference: they must agree.
    fb_librosa = librosa_mel(SAMPLE_RATE, N_FFT, N_MELS)
    fb_torchaudio = torchaudio_mel(SAMPLE_RATE, N_FFT, N_MELS)
    fb_gap = float(np.abs(fb_librosa - fb_torchaudio).max())
    # (torchaudio computes in float32: about 4e-8 apart at most, for weights up to 0.021)
    assert fb_gap < 1e-6 and np.array_equal(fb_librosa > 0, fb_torchaudio > 0), fb_gap

    sys.path.insert(0, args.jasper_dir)
    from common.features import FilterbankFeatures, SpecAugment  # the reference, unedited
    sys.path.pop(0)
    jasper = FilterbankFeatures(sample_rate=SAMPLE_RATE, window_size=0.02, window_stride=0.01, window="hann",
                                normalize="per_feature", n_fft=N_FFT, preemph=0.97, n_filt=N_MELS, dither=0.0,
                                pad_align=16)

    sys.path.insert(0, args.ds2_dir)
    from data import data_loader  # the reference, unedited
    sys.path.pop(0)
    ds2 = data_loader.SpectrogramParser(dict(sample_rate=SAMPLE_RATE, window_size=0.02, window_stride=0.01,
                                             window="hamming", noise_dir=None, noise_prob=0.4,
                                             noise_levels=(0.0, 0.5)), normalize=True, augment=False)

    pcm = signal()
    cases = []
    for n in LENGTHS:
        x = (pcm[:n] / 32768.0).astype(np.float32)
        feats, lens = jasper(torch.from_numpy(x.copy())[None], torch.tensor([n]))  # [1, n_mels, T_padded]
        log_mel = feats[0, :, :int(lens[0])].t()                                    # [T, n_mels]
        data_loader.load_audio = lambda path, x=x: x.copy()
        log_spectrogram = ds2.parse_audio("fixture").t()                            # [T, n_fft/2+1]
        cases.append({"samples": n, "log_mel": rounded(log_mel.numpy(), 6),
                      "log_spectrogram": rounded(log_spectrogram.numpy(), 6)})
        print(f"{n} samples: log_mel {tuple(log_mel.shape)}, log_spectrogram {tuple(log_spectrogram.shape)}")

    # Jasper's SpecAugment (its training config's masks) on ones [1, bins, frames], from seeded torch
    # CPU generators: mixseq draws from an at::Generator seeded the same (one mt19937) in the same order.
    spec_augment = []
    augment = SpecAugment(freq_masks=2, max_freq=20, time_masks=2, max_time=75)
    for seed, frames in [(1, 300), (7, 300), (25, 40)]:
        torch.manual_seed(seed)
        kept = augment(torch.ones(1, N_MELS, frames))[0]  # [bins, frames]
        zeroed_bins = [int(f) for f in torch.nonzero((kept == 0).all(dim=1)).flatten()]
        zeroed_frames = [int(t) for t in torch.nonzero((kept == 0).all(dim=0)).flatten()]
        union = torch.zeros_like(kept, dtype=torch.bool)
        union[zeroed_bins, :] = True
        union[:, zeroed_frames] = True
        assert torch.equal(union, kept == 0)
        spec_augment.append({"seed": seed, "bins": N_MELS, "frames": frames, "zeroed_bins": zeroed_bins,
                             "zeroed_frames": zeroed_frames})

    fixture = {
        "about": "written by make_fixture.py; see its header",
        "references": {"jasper": args.jasper_commit, "ds2": args.ds2_commit,
                       "torch": torch.__version__, "torchaudio": torchaudio.__version__},
        "sample_rate": SAMPLE_RATE,
        "samples_int16": [int(v) for v in pcm],
        "mel_filterbank": {"n_fft": N_FFT, "n_mels": N_MELS, "librosa_vs_torchaudio_max_abs": fb_gap,
                           "values": rounded(fb_torchaudio, 7)},  # [n_mels, n_fft/2+1]
        "cases": cases,
        "spec_augment": {"freq_masks": 2, "max_freq": 20, "time_masks": 2, "max_time": 75, "draws": spec_augment},
    }
    with open(os.path.join(HERE, "fixture.json"), "w") as out:
        json.dump(fixture, out, separators=(",", ":"))
        out.write("\n")
    print(f"mel filterbank: librosa port vs torchaudio max |diff| {fb_gap:.3g}")


if __name__ == "__main__":
    main()
