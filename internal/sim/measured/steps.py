"""Times the GPU work of engine steps for a model card on the GPU at hand.

The simulator's roofline says how long a step's kernels take: the bytes a
step streams over achieved bandwidth, or its FLOPs over achieved FLOP/s.
This script builds the model the card describes in plain PyTorch, with
random bf16 weights (no checkpoint is needed: kernel time does not depend
on the values), and times on one GPU what an engine step launches:
decode steps of B sequences at context L, captured in a CUDA graph as
vLLM does, whole and split into their matrix products (the weights the
step streams) and their attention (the KV cache it reads); and prefills
of N fresh tokens. Scheduling, sampling and the HTTP path are not in
these figures; the simulator's StepOverhead stands for them. The
elementwise kernels here are not fused as an engine's are, so the whole
step is shown for reference only.

Run on the GPU, for each card file beside this one, in BF16 or with FP8
weights (W8A8 with static activation scales through cuBLASLt; the output
projection stays BF16, as in FP8 checkpoints). The card files are the
simulator's built-in cards as JSON (TestMeasuredCardsMatchBuiltins keeps
them equal, and with -update writes them):
    python3 steps.py llama-3-8b.card.json > h200-llama-3-8b.json
    python3 steps.py llama-3-70b.card.json fp8 > h200-llama-3-70b-fp8.json
sim.KernelChecks (`benchci sim check`) reads the outputs.
"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

dev = "cuda"
dt = torch.bfloat16


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median_ms(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def ceilings():
    n = 1 << 30  # 2 GiB of bf16 each side, far past the L2
    a = torch.randn(n, device=dev, dtype=dt)
    b = torch.empty_like(a)
    ms = median_ms(lambda: b.copy_(a))
    copy = 2 * a.numel() * 2 / (ms / 1e3) / 1e9
    del a, b
    m = 8192
    x = torch.randn(m, m, device=dev, dtype=dt)
    y = torch.randn(m, m, device=dev, dtype=dt)
    ms = median_ms(lambda: x @ y, reps=10)
    mm = 2 * m ** 3 / (ms / 1e3) / 1e12
    return {"copy_gbs": round(copy, 1), "bf16_matmul_tflops": round(mm, 1)}


FP8_MAX = 448.0  # largest float8_e4m3fn


def lin(x, w):
    """x @ w.t() for a bf16 weight, or W8A8 for an FP8 one: the activation
    is cast with a static per-tensor scale (as FP8 checkpoints carry one)
    and the product runs on the FP8 tensor cores through cuBLASLt."""
    if isinstance(w, tuple):
        wq, ws, xs, inv = w
        xq = (x * inv).to(torch.float8_e4m3fn)
        return torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=dt)
    return x @ w.t()


class Model:
    def __init__(self, c, weights="bf16"):
        self.c = c
        self.weights = weights
        self.fp8_inputs = {}
        H, D = c["hidden"], c["head_dim"]
        nq, nkv, I, V = c["heads"], c["kv_heads"], c["intermediate"], c["vocab"]
        g = torch.Generator(device=dev)
        g.manual_seed(1)

        def w(*shape, quantize=False):
            t = torch.empty(*shape, device=dev, dtype=dt)
            t.normal_(0, 1 / math.sqrt(shape[-1]), generator=g)
            if quantize and weights == "fp8":
                s = (t.abs().amax().float() / FP8_MAX).clamp(min=1e-12)
                q = (t / s).to(torch.float8_e4m3fn)
                del t
                xs = torch.tensor(1 / 16, device=dev)  # timing does not depend on the value
                return (q, s, xs, torch.tensor(16.0, device=dev, dtype=dt))
            return t

        self.embed = w(V, H)
        self.layers = []
        for _ in range(c["layers"]):
            self.layers.append({
                "n1": torch.ones(H, device=dev, dtype=dt),
                "qkv": w((nq + 2 * nkv) * D, H, quantize=True),
                "o": w(H, nq * D, quantize=True),
                "n2": torch.ones(H, device=dev, dtype=dt),
                "gate_up": w(2 * I, H, quantize=True),
                "down": w(H, I, quantize=True),
            })
        self.norm = torch.ones(H, device=dev, dtype=dt)
        self.lm_head = w(V, H)

    def weight_bytes(self):
        def size(t):
            if isinstance(t, tuple):
                t = t[0]
            return t.numel() * t.element_size()
        n = size(self.embed) + size(self.lm_head) + size(self.norm)
        for l in self.layers:
            n += sum(size(t) for t in l.values())
        return n


def rms(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-5)


def rope_table(pos, d):
    """cos and sin for positions pos, computed once per step as engines do."""
    inv = 1.0 / (500000 ** (torch.arange(0, d, 2, device=dev, dtype=torch.float32) / d))
    ang = pos.float()[..., None] * inv
    return ang.cos().to(dt)[:, None], ang.sin().to(dt)[:, None]


def rope(x, cs):
    cos, sin = cs
    d = x.shape[-1]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def decode_step(m, ids, pos, kcache, vcache, L, part="full"):
    """One decode token for each of B sequences whose context is L tokens.

    kcache/vcache: [layers, B, kv_heads, L+1, D]; the new token's K and V go
    to slot L, and attention reads all L+1 slots. part "weights" runs only
    the matrix products (the weights the step streams), "attention" only
    the KV-cache writes and reads; "full" is the whole step.
    """
    c = m.c
    B = ids.shape[0]
    H, nq, nkv, D = c["hidden"], c["heads"], c["kv_heads"], c["head_dim"]
    g = nq // nkv
    x = m.embed[ids]  # [B, H]
    cs = rope_table(pos, D)
    q0 = torch.zeros(B, nkv, g, D, device=dev, dtype=dt)
    if part == "weights" and m.weights == "fp8":
        if B not in m.fp8_inputs:  # made in the warm-up, before capture
            m.fp8_inputs[B] = (torch.randn(B, H, device=dev, dtype=dt).to(torch.float8_e4m3fn),
                               torch.randn(B, c["intermediate"], device=dev, dtype=dt).to(torch.float8_e4m3fn))
        xh, xi = m.fp8_inputs[B]
    for i, l in enumerate(m.layers):
        if part == "attention":
            kcache[i, :, :, L] = q0[:, :, 0]
            vcache[i, :, :, L] = q0[:, :, 0]
            x = x + F.scaled_dot_product_attention(q0, kcache[i], vcache[i]).sum()
            continue
        if part == "weights":
            if m.weights == "fp8":
                # The products alone, on inputs already in FP8: an engine
                # fuses the activation cast into the kernel before it.
                for w, xq in ((l["qkv"], xh), (l["o"], xh), (l["gate_up"], xh), (l["down"], xi)):
                    torch._scaled_mm(xq, w[0].t(), scale_a=w[2], scale_b=w[1], out_dtype=dt)
                continue
            qkv = lin(x, l["qkv"])
            x = lin(qkv[:, :H], l["o"])
            gu = lin(x, l["gate_up"])
            x = lin(gu[:, : c["intermediate"]], l["down"])
            continue
        h = rms(x, l["n1"])
        qkv = lin(h, l["qkv"])
        q, k, v = qkv.split([nq * D, nkv * D, nkv * D], dim=-1)
        q = rope(q.view(B, nq, D), cs)
        k = rope(k.view(B, nkv, D), cs)
        kcache[i, :, :, L] = k
        vcache[i, :, :, L] = v.view(B, nkv, D)
        # The query heads that share a KV head form its query rows, so the
        # KV cache is read once per KV head, as paged decode kernels do.
        qg = q.view(B, nkv, g, D)
        a = F.scaled_dot_product_attention(qg, kcache[i], vcache[i])
        x = x + lin(a.reshape(B, nq * D), l["o"])
        h = rms(x, l["n2"])
        gu = lin(h, l["gate_up"])
        gt, up = gu.chunk(2, dim=-1)
        x = x + lin(F.silu(gt) * up, l["down"])
    if part == "attention":
        return x
    logits = rms(x, m.norm) @ m.lm_head.t()
    return logits.argmax(-1)


def prefill(m, ids):
    """A fresh prompt of N tokens for one sequence; logits for its last."""
    c = m.c
    N = ids.shape[0]
    nq, nkv, D = c["heads"], c["kv_heads"], c["head_dim"]
    cs = rope_table(torch.arange(N, device=dev), D)
    x = m.embed[ids]
    for l in m.layers:
        h = rms(x, l["n1"])
        qkv = lin(h, l["qkv"])
        q, k, v = qkv.split([nq * D, nkv * D, nkv * D], dim=-1)
        q = rope(q.view(N, nq, D), cs).transpose(0, 1)[None]
        k = rope(k.view(N, nkv, D), cs).transpose(0, 1)[None]
        v = v.view(N, nkv, D).transpose(0, 1)[None]
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + lin(a[0].transpose(0, 1).reshape(N, nq * D), l["o"])
        h = rms(x, l["n2"])
        gu = lin(h, l["gate_up"])
        gt, up = gu.chunk(2, dim=-1)
        x = x + lin(F.silu(gt) * up, l["down"])
    return (rms(x[-1:], m.norm) @ m.lm_head.t()).argmax(-1)


def time_decode(m, B, L):
    c = m.c
    shape = (c["layers"], B, c["kv_heads"], L + 1, c["head_dim"])
    kc = torch.randn(shape, device=dev, dtype=dt)
    vc = torch.randn(shape, device=dev, dtype=dt)
    ids = torch.randint(0, c["vocab"], (B,), device=dev)
    pos = torch.full((B,), L, device=dev)
    out = {}
    for part in ("full", "weights", "attention"):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                decode_step(m, ids, pos, kc, vc, L, part)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            decode_step(m, ids, pos, kc, vc, L, part)
        out[part + "_ms"] = round(median_ms(graph.replay, reps=30), 4)
        del graph
    del kc, vc
    torch.cuda.empty_cache()
    return out


def time_prefill(m, N):
    ids = torch.randint(0, m.c["vocab"], (N,), device=dev)
    with torch.no_grad():
        return median_ms(lambda: prefill(m, ids), reps=10)


def main():
    card = json.load(open(sys.argv[1]))
    weights = sys.argv[2] if len(sys.argv) > 2 else "bf16"
    out = {"card": card["name"], "weights": weights, "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "decode": [], "prefill": []}
    t0 = time.time()
    out["ceilings"] = ceilings()
    log("ceilings", out["ceilings"])
    torch.set_grad_enabled(False)
    m = Model(card, weights)
    out["weight_bytes"] = m.weight_bytes()
    log("model built", round(m.weight_bytes() / 1e9, 2), "GB", round(time.time() - t0, 1), "s")
    for B, L in [(1, 1024), (8, 1024), (32, 1024), (64, 1024), (128, 1024), (256, 1024), (16, 256), (16, 4096), (64, 256), (64, 4096), (256, 2048)]:
        try:
            r = time_decode(m, B, L)
            out["decode"].append({"batch": B, "context": L, **r})
            log("decode", B, L, r)
        except Exception as e:  # one failing shape must not lose the others
            log("decode", B, L, "failed:", repr(e))
            torch.cuda.empty_cache()
    for N in [512, 2048, 8192]:
        try:
            ms = time_prefill(m, N)
            out["prefill"].append({"tokens": N, "ms": round(ms, 4)})
            log("prefill", N, round(ms, 3), "ms")
        except Exception as e:
            log("prefill", N, "failed:", repr(e))
    out["seconds"] = round(time.time() - t0, 1)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
