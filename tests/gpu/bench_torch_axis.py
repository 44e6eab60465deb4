#!/usr/bin/env python3
"""bench_torch_axis.py - torch.sum(dim=...) on the shapes of the along-axis
rows (tests/gpu/axis_gpu.c bench, gpubatch bench axis): float32 and float64,
1 GiB, (N, C) over axis 0 and (R, N) over axis 1; GB/s of input and the ratio
to the device copy (read + write) of the same bytes measured in the same run.
Prints one line where PyTorch or a GPU is missing. run.sh imports ms()."""
try:
    import torch
except ImportError:
    torch = None


def ms(fn, reps=10):
    """The median milliseconds of reps runs of fn after two warm-up runs."""
    fn(); fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


def main():
    """The rows: the copy, then every dtype and shape."""
    nbytes = 1 << 30
    src = torch.full((nbytes // 4,), 0.25, device="cuda")
    dst = torch.empty_like(src)
    copy = 2 * nbytes / (ms(lambda: dst.copy_(src)) * 1e-3)
    print(f"torch device copy: {copy / 1e9:.0f} GB/s (read + write)")
    del src, dst
    for dt, name in ((torch.float32, "float32"), (torch.float64, "float64")):
        n = nbytes // (4 if dt == torch.float32 else 8)
        x = torch.full((n,), 0.25, dtype=dt, device="cuda")
        shapes = [(0, c) for c in (1, 3, 64, 1000, 100000)]
        shapes += [(1, m) for m in (3, 64, 1000, 1000000)]
        for axis, inner in shapes:
            v = x[: n // inner * inner].view(n // inner, inner)
            bw = v.numel() * v.element_size() / (ms(lambda: v.sum(dim=axis)) * 1e-3)
            print(f"torch {name:8s} axis {axis} {v.shape[0]:10d} {v.shape[1]:10d} "
                  f"{bw / 1e9:10.0f} {bw / copy:8.2f}")
        del x, v


if __name__ == "__main__":
    if torch is None:
        print("pytorch: not installed")
    elif not torch.cuda.is_available():
        print("pytorch: no GPU")
    else:
        main()
