#!/usr/bin/env python3
"""Writes tpusim's generated benchmark and validation workloads as XLA HLO text.

Python 3 standard library only. Run from anywhere; the files go to benchmarks/workloads/ (or --out):

  python3 scripts/gen_workloads.py            # write every workload
  python3 scripts/gen_workloads.py --list     # print the GEMM list as CSV (M,K,N) and exit

What it writes (every module is deterministic text; regenerating gives the same bytes):

* resnet50_convs_bf16.hlo — ResNet-50's 53 convolutions (batch 1, NHWC, 224x224 input) as independent
  `convolution` ops, one parameter pair each, so the per-op report gives per-layer cycles. Shapes: He et
  al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1 (50-layer column) with projection
  shortcuts on the first block of each stage and the original model's stride placement (stride 2 on the
  first 1x1 conv and on the projection of conv3_1/conv4_1/conv5_1, as in the authors' released Caffe
  model); this is the same 53-layer list as SCALE-Sim's topologies/conv_nets/Resnet50.csv (which adds the
  FC layer as a 54th). "Same" padding (3 for 7x7, 1 for 3x3), so spatial sizes are 112/56/28/14/7.
* gemm_<M>x<K>x<N>_bf16.hlo — one dot each, LHS bf16[M,K] x RHS bf16[K,N] -> f32[M,N]: SCALE-Sim's five
  reference GEMMs (scale-sim-v2's GEMM topologies; docs/sources.md) plus transformer- and GEMV-like shapes.
* gpt2_small_layer_bf16.hlo — one synthetic GPT-2-small decoder layer (d=768, 12 heads, seq 1024,
  batch 1, MLP 3072): layer norms, fused QKV projection, causal-mask-free softmax attention, output
  projection, tanh-GELU MLP, residual adds. Written because every real transformer module in
  tests/data/hlo/ (pt_gpt2_1layer_tp1 etc.) contains a KV-cache `scatter`, which tpusim cannot lower yet.
* tpu_v1_{mlp0,mlp1,lstm0,lstm1,cnn0,cnn1}.hlo — synthetic int8 layer stacks matched to Table 1 of Jouppi
  et al., "In-Datacenter Performance Analysis of a Tensor Processing Unit", ISCA 2017: the number and
  kind of layers, the total weights, the batch and the TPU ops per weight byte. Layer shapes are NOT
  published; the shapes chosen here are the simplest ones matching those totals (see V1_APPS and
  docs/validation.md). int8 operands, s32 accumulation; ReLU + requantization is clamp(0, x, 127) +
  convert to s8; an LSTM "vector layer" is convert to f32, logistic or tanh, scale by 127, convert to s8.
  CNN layers are written twice: as `convolution` (tpu_v1_cnnX.hlo) and as the equivalent implicit-GEMM
  `dot` over [B*H*W, Fh*Fw*Cin] x [Fh*Fw*Cin, Cout] (tpu_v1_cnnX_gemm.hlo), which is how TPU v1 maps a
  convolution onto its MXU without materializing im2col (ISCA 2017 §9).
"""

import argparse
import os
import sys

# SCALE-Sim's five reference GEMMs (M, K, N) first, then more shapes.
SCALESIM_GEMMS = [
    (128, 128, 128),
    (512, 512, 512),
    (1024, 1024, 1024),
    (64, 784, 128),
    (256, 4096, 1024),
]
EXTRA_GEMMS = [
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (1024, 768, 3072),  # GPT-2-small MLP up-projection, seq 1024
    (1024, 3072, 768),  # and down-projection
    (8, 4096, 4096),  # GEMV-like: memory bound
]
GEMMS = SCALESIM_GEMMS + EXTRA_GEMMS


class Hlo:
    """Accumulates the instructions of one entry computation (and helper computations)."""

    def __init__(self, name):
        self.name = name
        self.params = []  # (name, shape)
        self.body = []
        self.comps = []
        self.count = {}

    def fresh(self, base):
        n = self.count.get(base, 0)
        self.count[base] = n + 1
        return base if n == 0 else f"{base}.{n}"

    def param(self, base, shape):
        name = self.fresh(base)
        self.body.append(f"  %{name} = {shape} parameter({len(self.params)})")
        self.params.append((name, shape))
        return name, shape

    def op(self, base, shape, text):
        name = self.fresh(base)
        self.body.append(f"  %{name} = {shape} {text}")
        return name, shape

    def text(self, root_names, comment):
        lines = [f"HloModule {self.name}", ""]
        for c in comment.strip().splitlines():
            lines.append(f"// {c}".rstrip())
        lines.append("")
        for comp in self.comps:
            lines.extend(comp)
            lines.append("")
        if len(root_names) == 1:
            out_shape = root_names[0][1]
            root_line = None
        else:
            out_shape = "(" + ", ".join(s for _, s in root_names) + ")"
            operands = ", ".join(f"{s} %{n}" for n, s in root_names)
            root_line = f"  ROOT %result = {out_shape} tuple({operands})"
        sig = ", ".join(f"{n}: {strip_layout(s)}" for n, s in self.params)
        lines.append(f"ENTRY %main ({sig}) -> {strip_layout(out_shape)} {{")
        body = list(self.body)
        if root_line is None:
            last = body[-1]
            body[-1] = "  ROOT " + last.lstrip()
            assert root_names[0][0] in last
        else:
            body.append(root_line)
        lines.extend(body)
        lines.append("}")
        return "\n".join(lines) + "\n"


def strip_layout(shape):
    out, depth = [], 0
    for ch in shape:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def shp(dtype, dims):
    layout = ",".join(str(i) for i in reversed(range(len(dims))))
    return f"{dtype}[{','.join(str(d) for d in dims)}]{{{layout}}}"


def ref(v):
    return f"{v[1]} %{v[0]}"


def add_reducer(h, name, dtype, op):
    h.comps.append([
        f"%{name} (x: {dtype}[], y: {dtype}[]) -> {dtype}[] {{",
        f"  %x = {dtype}[] parameter(0)",
        f"  %y = {dtype}[] parameter(1)",
        f"  ROOT %r = {dtype}[] {op}({dtype}[] %x, {dtype}[] %y)",
        "}",
    ])


def dot(h, base, lhs, rhs, out_dtype, out_dims, lc, rc, lb=None, rb=None):
    attrs = ""
    if lb:
        attrs += f"lhs_batch_dims={{{lb}}}, "
    attrs += f"lhs_contracting_dims={{{lc}}}, "
    if rb:
        attrs += f"rhs_batch_dims={{{rb}}}, "
    attrs += f"rhs_contracting_dims={{{rc}}}"
    return h.op(base, shp(out_dtype, out_dims), f"dot({ref(lhs)}, {ref(rhs)}), {attrs}")


def conv(h, base, x, w, out_dtype, out_dims, k, stride, pad):
    win = f"size={k}x{k}"
    if stride != 1:
        win += f" stride={stride}x{stride}"
    if pad:
        win += f" pad={pad}_{pad}x{pad}_{pad}"
    return h.op(base, shp(out_dtype, out_dims),
                f"convolution({ref(x)}, {ref(w)}), window={{{win}}}, dim_labels=b01f_01io->b01f")


def unary(h, base, op, x):
    return h.op(base, x[1], f"{op}({ref(x)})")


def binary(h, base, op, a, b):
    return h.op(base, a[1], f"{op}({ref(a)}, {ref(b)})")


def const(h, base, dtype, value):
    return h.op(base, f"{dtype}[]", f"constant({value})")


def bcast(h, base, scalar_or_vec, dtype, dims, bdims=""):
    return h.op(base, shp(dtype, dims), f"broadcast({ref(scalar_or_vec)}), dimensions={{{bdims}}}")


def convert(h, base, x, dtype, dims):
    return h.op(base, shp(dtype, dims), f"convert({ref(x)})")


# --------------------------------------------------------------------------------------------------
# ResNet-50 convolutions.

def resnet50_layers():
    """(name, H_in, W_in, Fh, Cin, Cout, stride, pad) of ResNet-50's 53 convolutions, batch 1."""
    layers = [("conv1", 224, 224, 7, 3, 64, 2, 3)]
    hw = 56  # after the 3x3/2 max pool
    cin = 64
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)], start=2):
        cout = 4 * width
        for b in range(blocks):
            tag = f"conv{stage}_{b + 1}"
            stride = 2 if (b == 0 and stage > 2) else 1
            out_hw = hw // stride
            layers.append((f"{tag}_1x1a", hw, hw, 1, cin, width, stride, 0))
            layers.append((f"{tag}_3x3", out_hw, out_hw, 3, width, width, 1, 1))
            layers.append((f"{tag}_1x1b", out_hw, out_hw, 1, width, cout, 1, 0))
            if b == 0:
                layers.append((f"{tag}_proj", hw, hw, 1, cin, cout, stride, 0))
            cin, hw = cout, out_hw
    assert len(layers) == 53, len(layers)
    return layers


def gen_resnet50(dtype="bf16", acc="f32"):
    h = Hlo("resnet50_convs_" + dtype)
    outs = []
    macs = 0
    for (name, hin, win, k, cin, cout, stride, pad) in resnet50_layers():
        x = h.param(f"{name}_x", shp(dtype, [1, hin, win, cin]))
        w = h.param(f"{name}_w", shp(dtype, [k, k, cin, cout]))
        ho = (hin + 2 * pad - k) // stride + 1
        wo = (win + 2 * pad - k) // stride + 1
        outs.append(conv(h, name, x, w, acc, [1, ho, wo, cout], k, stride, pad))
        macs += ho * wo * cout * k * k * cin
    comment = f"""ResNet-50's 53 convolutions, batch 1, NHWC, {dtype} operands, {acc} results, as independent ops.
Shapes: He et al., CVPR 2016, Table 1 (50-layer), projection shortcuts, original stride placement
(stride 2 on the first 1x1 and the projection of conv3_1/conv4_1/conv5_1), 'same' padding; same layer
list as SCALE-Sim's topologies/conv_nets/Resnet50.csv. Total {macs} MACs ({2 * macs} FLOP).
Generated by scripts/gen_workloads.py; do not edit."""
    return h.text(outs, comment)


# --------------------------------------------------------------------------------------------------
# GEMMs.

def gen_gemm(m, k, n, dtype="bf16", acc="f32"):
    h = Hlo(f"gemm_{m}x{k}x{n}_{dtype}")
    a = h.param("a", shp(dtype, [m, k]))
    b = h.param("b", shp(dtype, [k, n]))
    d = dot(h, "dot", a, b, acc, [m, n], "1", "0")
    comment = f"""GEMM M={m} K={k} N={n}: {dtype}[{m},{k}] x {dtype}[{k},{n}] -> {acc}, {2 * m * k * n} FLOP.
Generated by scripts/gen_workloads.py; do not edit."""
    return h.text([d], comment)


# --------------------------------------------------------------------------------------------------
# GPT-2-small layer.

def layer_norm(h, base, x, s, d, gamma, beta):
    """x: f32[s,d] -> f32[s,d]: (x - mean) * rsqrt(var + 1e-5) * gamma + beta."""
    zero = const(h, f"{base}_zero", "f32", "0")
    sum_ = h.op(f"{base}_sum", shp("f32", [s]), f"reduce({ref(x)}, {ref(zero)}), dimensions={{1}}, to_apply=%add_f32")
    inv_d = const(h, f"{base}_invd", "f32", repr(1.0 / d))
    inv_d_b = bcast(h, f"{base}_invd_b", inv_d, "f32", [s])
    mean = binary(h, f"{base}_mean", "multiply", sum_, inv_d_b)
    mean_b = bcast(h, f"{base}_mean_b", mean, "f32", [s, d], "0")
    xc = binary(h, f"{base}_xc", "subtract", x, mean_b)
    sq = binary(h, f"{base}_sq", "multiply", xc, xc)
    vs = h.op(f"{base}_varsum", shp("f32", [s]), f"reduce({ref(sq)}, {ref(zero)}), dimensions={{1}}, to_apply=%add_f32")
    var = binary(h, f"{base}_var", "multiply", vs, inv_d_b)
    eps = const(h, f"{base}_eps", "f32", "1e-05")
    eps_b = bcast(h, f"{base}_eps_b", eps, "f32", [s])
    ve = binary(h, f"{base}_ve", "add", var, eps_b)
    rs = unary(h, f"{base}_rsqrt", "rsqrt", ve)
    rs_b = bcast(h, f"{base}_rsqrt_b", rs, "f32", [s, d], "0")
    xn = binary(h, f"{base}_xn", "multiply", xc, rs_b)
    g_b = bcast(h, f"{base}_gamma_b", gamma, "f32", [s, d], "1")
    b_b = bcast(h, f"{base}_beta_b", beta, "f32", [s, d], "1")
    return binary(h, f"{base}_out", "add", binary(h, f"{base}_scaled", "multiply", xn, g_b), b_b)


def gen_gpt2_layer(s=1024, d=768, heads=12, ff=3072):
    dh = d // heads
    h = Hlo("gpt2_small_layer_bf16")
    add_reducer(h, "add_f32", "f32", "add")
    add_reducer(h, "max_f32", "f32", "maximum")
    x = h.param("x", shp("f32", [s, d]))
    ln1_g = h.param("ln1_gamma", shp("f32", [d]))
    ln1_b = h.param("ln1_beta", shp("f32", [d]))
    w_qkv = h.param("w_qkv", shp("bf16", [d, 3 * d]))
    w_o = h.param("w_o", shp("bf16", [d, d]))
    ln2_g = h.param("ln2_gamma", shp("f32", [d]))
    ln2_b = h.param("ln2_beta", shp("f32", [d]))
    w_fc = h.param("w_fc", shp("bf16", [d, ff]))
    w_proj = h.param("w_proj", shp("bf16", [ff, d]))

    a = layer_norm(h, "ln1", x, s, d, ln1_g, ln1_b)
    a16 = convert(h, "ln1_bf16", a, "bf16", [s, d])
    qkv = dot(h, "qkv", a16, w_qkv, "f32", [s, 3 * d], "1", "0")
    qkv16 = convert(h, "qkv_bf16", qkv, "bf16", [s, 3 * d])
    qkv_r = h.op("qkv_heads", shp("bf16", [s, 3, heads, dh]), f"reshape({ref(qkv16)})")
    parts = []
    for i, nm in enumerate(["q", "k", "v"]):
        sl = h.op(f"{nm}_slice", shp("bf16", [s, 1, heads, dh]),
                  f"slice({ref(qkv_r)}), slice={{[0:{s}], [{i}:{i + 1}], [0:{heads}], [0:{dh}]}}")
        r = h.op(f"{nm}_r", shp("bf16", [s, heads, dh]), f"reshape({ref(sl)})")
        t = h.op(f"{nm}_t", shp("bf16", [heads, s, dh]), f"transpose({ref(r)}), dimensions={{1,0,2}}")
        parts.append(t)
    q, k, v = parts
    scores = dot(h, "scores", q, k, "f32", [heads, s, s], "2", "2", "0", "0")
    scale = const(h, "scale", "f32", repr(1.0 / dh ** 0.5))
    scale_b = bcast(h, "scale_b", scale, "f32", [heads, s, s])
    scaled = binary(h, "scores_scaled", "multiply", scores, scale_b)
    ninf = const(h, "ninf", "f32", "-inf")
    mx = h.op("softmax_max", shp("f32", [heads, s]), f"reduce({ref(scaled)}, {ref(ninf)}), dimensions={{2}}, to_apply=%max_f32")
    mx_b = bcast(h, "softmax_max_b", mx, "f32", [heads, s, s], "0,1")
    ex = unary(h, "softmax_exp", "exponential", binary(h, "softmax_sub", "subtract", scaled, mx_b))
    zero = const(h, "zero", "f32", "0")
    sm = h.op("softmax_sum", shp("f32", [heads, s]), f"reduce({ref(ex)}, {ref(zero)}), dimensions={{2}}, to_apply=%add_f32")
    sm_b = bcast(h, "softmax_sum_b", sm, "f32", [heads, s, s], "0,1")
    p = binary(h, "softmax", "divide", ex, sm_b)
    p16 = convert(h, "probs_bf16", p, "bf16", [heads, s, s])
    ctx = dot(h, "context", p16, v, "f32", [heads, s, dh], "2", "1", "0", "0")
    ctx_t = h.op("context_t", shp("f32", [s, heads, dh]), f"transpose({ref(ctx)}), dimensions={{1,0,2}}")
    ctx_r = h.op("context_r", shp("f32", [s, d]), f"reshape({ref(ctx_t)})")
    ctx16 = convert(h, "context_bf16", ctx_r, "bf16", [s, d])
    attn = dot(h, "attn_out", ctx16, w_o, "f32", [s, d], "1", "0")
    res1 = binary(h, "residual1", "add", x, attn)

    m = layer_norm(h, "ln2", res1, s, d, ln2_g, ln2_b)
    m16 = convert(h, "ln2_bf16", m, "bf16", [s, d])
    up = dot(h, "mlp_up", m16, w_fc, "f32", [s, ff], "1", "0")
    # tanh GELU: 0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3)))
    def cb(name, val):
        return bcast(h, name + "_b", const(h, name, "f32", val), "f32", [s, ff])
    x3 = binary(h, "gelu_x3", "multiply", binary(h, "gelu_x2", "multiply", up, up), up)
    inner = binary(h, "gelu_inner", "add", up, binary(h, "gelu_cx3", "multiply", x3, cb("gelu_c0", "0.044715")))
    th = unary(h, "gelu_tanh", "tanh", binary(h, "gelu_scaled", "multiply", inner, cb("gelu_c1", "0.7978845608")))
    one_p = binary(h, "gelu_1p", "add", th, cb("gelu_one", "1"))
    gelu = binary(h, "gelu", "multiply", binary(h, "gelu_half", "multiply", up, cb("gelu_c2", "0.5")), one_p)
    g16 = convert(h, "gelu_bf16", gelu, "bf16", [s, ff])
    down = dot(h, "mlp_down", g16, w_proj, "f32", [s, d], "1", "0")
    out = binary(h, "residual2", "add", res1, down)
    flops = 2 * s * d * (3 * d + d + 2 * ff) + 2 * 2 * heads * s * s * dh
    comment = f"""One synthetic GPT-2-small decoder layer: seq {s}, d_model {d}, {heads} heads, MLP {ff}, batch 1.
bf16 matmul operands, f32 accumulation and vector math (layer norm, softmax, tanh-GELU, residuals).
No causal mask, no dropout. Matmul FLOP: {flops}. Stands in for the real modules in tests/data/hlo/
(pt_gpt2_1layer_tp1.hlo ...), which tpusim cannot lower yet (KV-cache scatter).
Generated by scripts/gen_workloads.py; do not edit."""
    return h.text([out], comment)


# --------------------------------------------------------------------------------------------------
# TPU v1 applications (ISCA 2017 Table 1).

# Each app: batch, and a list of layers:
#   ("fc", K, N, vector_ops)   -- vector_ops: list of "logistic"/"tanh" vector layers after it
#   ("conv", H, W, k, Cin, Cout)
#   ("pool2s2",) 2x2 stride-2 max pool; ("pool2s1",) 2x2 stride-1 'same' max pool; ("gap",) global
#   average pool (counted as a pool layer).
def v1_apps():
    apps = {}
    # MLP0: 5 FC, 20M weights, batch 200 (ops/weight byte 200): 5 x 2048x2048 = 20.97M.
    apps["mlp0"] = dict(batch=200, layers=[("fc", 2048, 2048, [])] * 5)
    # MLP1: 4 FC, 5M weights, batch 168: 4 x 1152x1152 = 5.31M.
    apps["mlp1"] = dict(batch=168, layers=[("fc", 1152, 1152, [])] * 4)
    # LSTM0: 24 FC + 34 vector layers, 52M weights, batch 64: 24 x 1472x1472 = 52.0M;
    # 10 FCs are followed by two vector layers (logistic, tanh), 14 by one (logistic).
    apps["lstm0"] = dict(batch=64, layers=[("fc", 1472, 1472, ["logistic", "tanh"])] * 10 +
                         [("fc", 1472, 1472, ["logistic"])] * 14)
    # LSTM1: 37 FC + 19 vector layers, 34M weights, batch 96: 37 x 960x960 = 34.1M;
    # 19 FCs are followed by one vector layer (alternating logistic/tanh), 18 by none.
    l1 = []
    for i in range(37):
        l1.append(("fc", 960, 960, [("logistic" if i % 4 == 0 else "tanh")] if i % 2 == 0 else []))
    apps["lstm1"] = dict(batch=96, layers=l1)
    # CNN0: 16 conv layers, 8M weights, batch 8, 2888 ops/weight byte = 8 x 19 x 19 (a Go board):
    # 16 x 3x3 convs of 236 -> 236 channels on 19x19 = 8.02M weights.
    apps["cnn0"] = dict(batch=8, layers=[("conv", 19, 19, 3, 236, 236)] * 16)
    # CNN1: 4 FC + 72 conv + 13 pool, 100M weights, batch 32, 1750 ops/weight byte. Not published beyond
    # that; an Inception-like stack: 8 shallow 3x3 convs of 64 channels at 28x28 ("some layers in CNN1
    # have shallow feature depths", §8), 24 at 14x14 (272 ch), 40 at 7x7 (352 ch), 2 stride-2 pools,
    # 10 stride-1 pools, a global average pool, and FC 352-4096-4096-4096-1000. Channel counts were
    # picked (by a small search) to give 99.2M weights and 1766 MACs per weight byte.
    c1 = []
    c1 += [("conv", 28, 28, 3, 64, 64)] * 8
    c1 += [("pool2s2",)]
    for i in range(24):
        c1.append(("conv", 14, 14, 3, 64 if i == 0 else 272, 272))
        if i % 4 == 3:
            c1.append(("pool2s1",))
    c1 += [("pool2s2",)]
    for i in range(40):
        c1.append(("conv", 7, 7, 3, 272 if i == 0 else 352, 352))
        if i % 10 == 9:
            c1.append(("pool2s1",))
    c1 += [("gap",)]
    c1 += [("fc", 352, 4096, []), ("fc", 4096, 4096, []), ("fc", 4096, 4096, []), ("fc", 4096, 1000, [])]
    apps["cnn1"] = dict(batch=32, layers=c1)
    return apps


def v1_stats(app):
    b = app["batch"]
    fc = conv_n = vec = pool = 0
    weights = macs = 0
    for L in app["layers"]:
        if L[0] == "fc":
            fc += 1
            vec += len(L[3])
            weights += L[1] * L[2]
            macs += b * L[1] * L[2]
        elif L[0] == "conv":
            conv_n += 1
            _, hh, ww, k, ci, co = L
            weights += k * k * ci * co
            macs += b * hh * ww * k * k * ci * co
        else:
            pool += 1
    return dict(fc=fc, conv=conv_n, vector=vec, pool=pool, weights=weights, macs=macs,
                ops_per_weight_byte=macs / weights)


def requant(h, base, acc, dims):
    lo = const(h, f"{base}_lo", "s32", "0")
    hi = const(h, f"{base}_hi", "s32", "127")
    cl = h.op(f"{base}_relu", shp("s32", dims), f"clamp({ref(lo)}, {ref(acc)}, {ref(hi)})")
    return convert(h, f"{base}_q", cl, "s8", dims)


def vector_layer(h, base, x8, dims, fn):
    xf = convert(h, f"{base}_f", x8, "f32", dims)
    y = unary(h, f"{base}_{fn}", fn, xf)
    c = bcast(h, f"{base}_scale_b", const(h, f"{base}_scale", "f32", "127"), "f32", dims)
    ys = binary(h, f"{base}_scaled", "multiply", y, c)
    return convert(h, f"{base}_q", ys, "s8", dims)


def gen_v1_app(name, app, conv_as_dot):
    b = app["batch"]
    st = v1_stats(app)
    h = Hlo(f"tpu_v1_{name}" + ("_gemm" if conv_as_dot else ""))
    add_reducer(h, "max_s8", "s8", "maximum")
    add_reducer(h, "add_s32", "s32", "add")
    first = app["layers"][0]
    if first[0] == "fc":
        act = h.param("input", shp("s8", [b, first[1]]))
        dims = [b, first[1]]
    else:
        act = h.param("input", shp("s8", [b, first[1], first[2], first[4]]))
        dims = [b, first[1], first[2], first[4]]
    li = 0
    gemm_outs = []
    for L in app["layers"]:
        kind = L[0]
        if kind == "fc":
            li += 1
            _, kk, nn, vecs = L
            if len(dims) != 2:
                act = h.op(f"flatten{li}", shp("s8", [b, kk]), f"reshape({ref(act)})")
                dims = [b, kk]
            assert dims == [b, kk], (name, dims, L)
            w = h.param(f"w{li}", shp("s8", [kk, nn]))
            acc = dot(h, f"fc{li}", act, w, "s32", [b, nn], "1", "0")
            dims = [b, nn]
            if vecs:
                act = convert(h, f"fc{li}_q", h.op(f"fc{li}_sat", shp("s32", dims),
                    f"clamp({ref(const(h, f'fc{li}_lo', 's32', '-128'))}, {ref(acc)}, "
                    f"{ref(const(h, f'fc{li}_hi', 's32', '127'))})"), "s8", dims)
                for j, fn in enumerate(vecs):
                    act = vector_layer(h, f"vec{li}_{j}", act, dims, fn)
            else:
                act = requant(h, f"fc{li}", acc, dims)
        elif kind == "conv":
            li += 1
            _, hh, ww, k, ci, co = L
            assert dims == [b, hh, ww, ci], (name, dims, L)
            w_dims = [k, k, ci, co]
            if conv_as_dot:
                # Implicit GEMM: the MXU sees [B*H*W, k*k*Cin] x [k*k*Cin, Cout] (same MACs and weights;
                # the patch gather is free, as in TPU v1's UB addressing).
                m = b * hh * ww
                xin = h.param(f"patches{li}", shp("s8", [m, k * k * ci]))
                w = h.param(f"w{li}", shp("s8", [k * k * ci, co]))
                accd = dot(h, f"conv{li}", xin, w, "s32", [m, co], "1", "0")
                q = requant(h, f"conv{li}", accd, [m, co])
                act = h.op(f"conv{li}_nhwc", shp("s8", [b, hh, ww, co]), f"reshape({ref(q)})")
                # The next layer's patches are a fresh parameter, so every layer's output is a result.
                gemm_outs.append(act)
            else:
                w = h.param(f"w{li}", shp("s8", w_dims))
                accd = conv(h, f"conv{li}", act, w, "s32", [b, hh, ww, co], k, 1, k // 2)
                act = requant(h, f"conv{li}", accd, [b, hh, ww, co])
            dims = [b, hh, ww, co]
        elif kind == "pool2s2":
            _, hh, ww, c = dims
            r = h.op("pool_r", shp("s8", [b, hh // 2, 2, ww // 2, 2, c]), f"reshape({ref(act)})")
            init = const(h, "pool_init", "s8", "-128")
            act = h.op("pool", shp("s8", [b, hh // 2, ww // 2, c]),
                       f"reduce({ref(r)}, {ref(init)}), dimensions={{2,4}}, to_apply=%max_s8")
            dims = [b, hh // 2, ww // 2, c]
        elif kind == "pool2s1":
            _, hh, ww, c = dims
            init = const(h, "pool_pad_value", "s8", "-128")
            padded = h.op("pool_pad", shp("s8", [b, hh + 1, ww + 1, c]),
                          f"pad({ref(act)}, {ref(init)}), padding=0_0x0_1x0_1x0_0")
            sl = []
            for dy in (0, 1):
                for dx in (0, 1):
                    sl.append(h.op("pool_win", shp("s8", dims),
                                   f"slice({ref(padded)}), slice={{[0:{b}], [{dy}:{dy + hh}], "
                                   f"[{dx}:{dx + ww}], [0:{c}]}}"))
            m1 = binary(h, "pool_max", "maximum", sl[0], sl[1])
            m2 = binary(h, "pool_max", "maximum", sl[2], sl[3])
            act = binary(h, "pool_max", "maximum", m1, m2)
        elif kind == "gap":
            _, hh, ww, c = dims
            w32 = convert(h, "gap_s32", act, "s32", dims)
            zero = const(h, "gap_zero", "s32", "0")
            s = h.op("gap_sum", shp("s32", [b, c]), f"reduce({ref(w32)}, {ref(zero)}), dimensions={{1,2}}, to_apply=%add_s32")
            # Divide by H*W with a right shift would need shift ops; clamp + convert keeps it int8.
            act = requant(h, "gap", s, [b, c])
            dims = [b, c]
    comment = f"""TPU v1 application {name.upper()} (Jouppi et al., ISCA 2017, Table 1), rebuilt as a synthetic int8 layer stack.
Layers: {st['fc']} FC, {st['conv']} conv, {st['vector']} vector, {st['pool']} pool; weights {st['weights']} ({st['weights'] / 1e6:.2f}M);
batch {b}; MACs {st['macs']}; ops (MACs) per weight byte {st['ops_per_weight_byte']:.0f}.
Layer shapes are not published: these are the simplest shapes matching Table 1's totals.
{"Convolutions written as implicit-GEMM dots (patches given as inputs)." if conv_as_dot and st['conv'] else ""}
Generated by scripts/gen_workloads.py; do not edit."""
    if gemm_outs and gemm_outs[-1] is not act:
        gemm_outs.append(act)
    return h.text(gemm_outs if gemm_outs else [act], comment)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(root, "benchmarks", "workloads"))
    ap.add_argument("--list", action="store_true", help="print the GEMM list (M,K,N) and exit")
    ap.add_argument("--v1-stats", action="store_true", help="print the TPU v1 apps' totals and exit")
    args = ap.parse_args()
    if args.list:
        print("M,K,N")
        for g in GEMMS:
            print(",".join(map(str, g)))
        return 0
    if args.v1_stats:
        print("app,fc,conv,vector,pool,weights,batch,macs,ops_per_weight_byte")
        for name, app in v1_apps().items():
            s = v1_stats(app)
            print(f"{name},{s['fc']},{s['conv']},{s['vector']},{s['pool']},{s['weights']},"
                  f"{app['batch']},{s['macs']},{s['ops_per_weight_byte']:.1f}")
        return 0
    files = {"resnet50_convs_bf16.hlo": gen_resnet50(), "gpt2_small_layer_bf16.hlo": gen_gpt2_layer()}
    for (m, k, n) in GEMMS:
        files[f"gemm_{m}x{k}x{n}_bf16.hlo"] = gen_gemm(m, k, n)
    for name, app in v1_apps().items():
        files[f"tpu_v1_{name}.hlo"] = gen_v1_app(name, app, conv_as_dot=False)
        if any(L[0] == "conv" for L in app["layers"]):
            files[f"tpu_v1_{name}_gemm.hlo"] = gen_v1_app(name, app, conv_as_dot=True)
    os.makedirs(args.out, exist_ok=True)
    for fname, text in sorted(files.items()):
        with open(os.path.join(args.out, fname), "w") as f:
            f.write(text)
    print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
