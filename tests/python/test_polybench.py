"""The 30 kernels of PolyBench/C 4.2.1 (examples/polybench/*.loom), each
written as PolyBench writes it, run as written on the CPU target and checked
against a NumPy reference written here from the C (plain loops in the C's
order, or whole-array NumPy where every element is computed the same way),
and run through the loopy oracle (tests/python/loopy_oracle.py).

Inputs are Loom's random arrays (`random_arguments`), except where
PolyBench's numerics need a well-posed problem (a diagonally dominant or SPD
matrix for the factorizations and solves, a tall matrix of full rank for
Gram-Schmidt, a Toeplitz system with a small first row for Durbin) or where
the data means something (nonnegative path lengths, RNA bases in 0..3).
"""
import math
import os
import re
import warnings

import numpy as np
import pytest

import loom as lp

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("LOOM_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
POLYBENCH_DIR = os.path.join(SOURCE_DIR, "examples", "polybench")

ALPHA, BETA = 1.5, 1.2
RTOL, ATOL = 1e-9, 1e-12

needs_cpu = pytest.mark.skipif(not lp._loom.has_cpu_target(), reason="Loom was built without the LLVM CPU target")


def _text(name):
    with open(os.path.join(POLYBENCH_DIR, name + ".loom")) as f:
        return f.read()


# ---------------------------------------------------------------------------
# NumPy references: each takes the arrays (copies, updated in place), the
# sizes and the scalars, as the C function takes them.

def ref_correlation(a, m, n, float_n):
    data, corr, mean, stddev = a["data"], a["corr"], a["mean"], a["stddev"]
    eps = 0.1
    for j in range(m):
        mean[j] = 0.0
        for i in range(n):
            mean[j] += data[i, j]
        mean[j] /= float_n
    for j in range(m):
        stddev[j] = 0.0
        for i in range(n):
            stddev[j] += (data[i, j] - mean[j]) * (data[i, j] - mean[j])
        stddev[j] /= float_n
        stddev[j] = math.sqrt(stddev[j])
        stddev[j] = 1.0 if stddev[j] <= eps else stddev[j]
    for i in range(n):
        for j in range(m):
            data[i, j] -= mean[j]
            data[i, j] /= math.sqrt(float_n) * stddev[j]
    for i in range(m - 1):
        corr[i, i] = 1.0
        for j in range(i + 1, m):
            corr[i, j] = 0.0
            for k in range(n):
                corr[i, j] += data[k, i] * data[k, j]
            corr[j, i] = corr[i, j]
    corr[m - 1, m - 1] = 1.0


def ref_covariance(a, m, n, float_n):
    data, cov, mean = a["data"], a["cov"], a["mean"]
    for j in range(m):
        mean[j] = 0.0
        for i in range(n):
            mean[j] += data[i, j]
        mean[j] /= float_n
    for i in range(n):
        for j in range(m):
            data[i, j] -= mean[j]
    for i in range(m):
        for j in range(i, m):
            cov[i, j] = 0.0
            for k in range(n):
                cov[i, j] += data[k, i] * data[k, j]
            cov[i, j] /= float_n - 1.0
            cov[j, i] = cov[i, j]


def ref_gemm(a, ni, nj, nk, alpha, beta):
    C, A, B = a["C"], a["A"], a["B"]
    for i in range(ni):
        for j in range(nj):
            C[i, j] *= beta
        for k in range(nk):
            for j in range(nj):
                C[i, j] += alpha * A[i, k] * B[k, j]


def ref_gemver(a, n, alpha, beta):
    A, u1, v1, u2, v2, w, x, y, z = (a[k] for k in ("A", "u1", "v1", "u2", "v2", "w", "x", "y", "z"))
    for i in range(n):
        for j in range(n):
            A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
    for i in range(n):
        for j in range(n):
            x[i] = x[i] + beta * A[j, i] * y[j]
    for i in range(n):
        x[i] = x[i] + z[i]
    for i in range(n):
        for j in range(n):
            w[i] = w[i] + alpha * A[i, j] * x[j]


def ref_gesummv(a, n, alpha, beta):
    A, B, tmp, x, y = a["A"], a["B"], a["tmp"], a["x"], a["y"]
    for i in range(n):
        tmp[i] = 0.0
        y[i] = 0.0
        for j in range(n):
            tmp[i] = A[i, j] * x[j] + tmp[i]
            y[i] = B[i, j] * x[j] + y[i]
        y[i] = alpha * tmp[i] + beta * y[i]


def ref_symm(a, m, n, alpha, beta):
    C, A, B = a["C"], a["A"], a["B"]
    for i in range(m):
        for j in range(n):
            temp2 = 0.0
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                temp2 += B[k, j] * A[i, k]
            C[i, j] = beta * C[i, j] + alpha * B[i, j] * A[i, i] + alpha * temp2


def ref_syr2k(a, n, m, alpha, beta):
    C, A, B = a["C"], a["A"], a["B"]
    for i in range(n):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(m):
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] + B[j, k] * alpha * A[i, k]


def ref_syrk(a, n, m, alpha, beta):
    C, A = a["C"], a["A"]
    for i in range(n):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(m):
            for j in range(i + 1):
                C[i, j] += alpha * A[i, k] * A[j, k]


def ref_trmm(a, m, n, alpha):
    A, B = a["A"], a["B"]
    for i in range(m):
        for j in range(n):
            for k in range(i + 1, m):
                B[i, j] += A[k, i] * B[k, j]
            B[i, j] = alpha * B[i, j]


def ref_2mm(a, ni, nj, nk, nl, alpha, beta):
    tmp, A, B, C, D = a["tmp"], a["A"], a["B"], a["C"], a["D"]
    for i in range(ni):
        for j in range(nj):
            tmp[i, j] = 0.0
            for k in range(nk):
                tmp[i, j] += alpha * A[i, k] * B[k, j]
    for i in range(ni):
        for j in range(nl):
            D[i, j] *= beta
            for k in range(nj):
                D[i, j] += tmp[i, k] * C[k, j]


def ref_3mm(a, ni, nj, nk, nl, nm):
    E, A, B, F, C, D, G = (a[k] for k in ("E", "A", "B", "F", "C", "D", "G"))
    for i in range(ni):
        for j in range(nj):
            E[i, j] = 0.0
            for k in range(nk):
                E[i, j] += A[i, k] * B[k, j]
    for i in range(nj):
        for j in range(nl):
            F[i, j] = 0.0
            for k in range(nm):
                F[i, j] += C[i, k] * D[k, j]
    for i in range(ni):
        for j in range(nl):
            G[i, j] = 0.0
            for k in range(nj):
                G[i, j] += E[i, k] * F[k, j]


def ref_atax(a, m, n):
    A, x, y, tmp = a["A"], a["x"], a["y"], a["tmp"]
    for i in range(n):
        y[i] = 0
    for i in range(m):
        tmp[i] = 0.0
        for j in range(n):
            tmp[i] = tmp[i] + A[i, j] * x[j]
        for j in range(n):
            y[j] = y[j] + A[i, j] * tmp[i]


def ref_bicg(a, m, n):
    A, s, q, p, r = a["A"], a["s"], a["q"], a["p"], a["r"]
    for i in range(m):
        s[i] = 0
    for i in range(n):
        q[i] = 0.0
        for j in range(m):
            s[j] = s[j] + r[i] * A[i, j]
            q[i] = q[i] + A[i, j] * p[j]


def ref_doitgen(a, nr, nq, **sizes):
    np_ = sizes["np"]  # (PolyBench's name, which shadows numpy's usual one)
    A, C4, s_ = a["A"], a["C4"], a["sum"]
    for r in range(nr):
        for q in range(nq):
            for p in range(np_):
                s_[p] = 0.0
                for s in range(np_):
                    s_[p] += A[r, q, s] * C4[s, p]
            for p in range(np_):
                A[r, q, p] = s_[p]


def ref_mvt(a, n):
    x1, x2, y_1, y_2, A = a["x1"], a["x2"], a["y_1"], a["y_2"], a["A"]
    for i in range(n):
        for j in range(n):
            x1[i] = x1[i] + A[i, j] * y_1[j]
    for i in range(n):
        for j in range(n):
            x2[i] = x2[i] + A[j, i] * y_2[j]


def ref_cholesky(a, n):
    A = a["A"]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = math.sqrt(A[i, i])


def ref_durbin(a, n):
    r, y = a["r"], a["y"]
    z = np.zeros(n)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        s = 0.0
        for i in range(k):
            s += r[k - i - 1] * y[i]
        alpha = -(r[k] + s) / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha


def ref_gramschmidt(a, m, n):
    A, R, Q = a["A"], a["R"], a["Q"]
    for k in range(n):
        nrm = 0.0
        for i in range(m):
            nrm += A[i, k] * A[i, k]
        R[k, k] = math.sqrt(nrm)
        for i in range(m):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = 0.0
            for i in range(m):
                R[k, j] += Q[i, k] * A[i, j]
            for i in range(m):
                A[i, j] = A[i, j] - Q[i, k] * R[k, j]


def ref_lu(a, n):
    A = a["A"]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]


def ref_ludcmp(a, n):
    A, b, x, y = a["A"], a["b"], a["x"], a["y"]
    for i in range(n):
        for j in range(i):
            w = A[i, j]
            for k in range(j):
                w -= A[i, k] * A[k, j]
            A[i, j] = w / A[j, j]
        for j in range(i, n):
            w = A[i, j]
            for k in range(i):
                w -= A[i, k] * A[k, j]
            A[i, j] = w
    for i in range(n):
        w = b[i]
        for j in range(i):
            w -= A[i, j] * y[j]
        y[i] = w
    for i in range(n - 1, -1, -1):
        w = y[i]
        for j in range(i + 1, n):
            w -= A[i, j] * x[j]
        x[i] = w / A[i, i]


def ref_trisolv(a, n):
    L, x, b = a["L"], a["x"], a["b"]
    for i in range(n):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]


def ref_deriche(a, w, h, alpha):
    imgIn, imgOut, y1, y2 = a["imgIn"], a["imgOut"], a["y1"], a["y2"]
    exp = math.exp
    k = (1.0 - exp(-alpha)) * (1.0 - exp(-alpha)) / (1.0 + 2.0 * alpha * exp(-alpha) - exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * exp(-alpha) * (alpha - 1.0)
    a3 = a7 = k * exp(-alpha) * (alpha + 1.0)
    a4 = a8 = -k * exp(-2.0 * alpha)
    b1 = math.pow(2.0, -alpha)
    b2 = -exp(-2.0 * alpha)
    c1 = c2 = 1.0
    for i in range(w):
        ym1 = ym2 = xm1 = 0.0
        for j in range(h):
            y1[i, j] = a1 * imgIn[i, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
            xm1 = imgIn[i, j]
            ym2 = ym1
            ym1 = y1[i, j]
    for i in range(w):
        yp1 = yp2 = xp1 = xp2 = 0.0
        for j in range(h - 1, -1, -1):
            y2[i, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
            xp2 = xp1
            xp1 = imgIn[i, j]
            yp2 = yp1
            yp1 = y2[i, j]
    for i in range(w):
        for j in range(h):
            imgOut[i, j] = c1 * (y1[i, j] + y2[i, j])
    for j in range(h):
        tm1 = ym1 = ym2 = 0.0
        for i in range(w):
            y1[i, j] = a5 * imgOut[i, j] + a6 * tm1 + b1 * ym1 + b2 * ym2
            tm1 = imgOut[i, j]
            ym2 = ym1
            ym1 = y1[i, j]
    for j in range(h):
        tp1 = tp2 = yp1 = yp2 = 0.0
        for i in range(w - 1, -1, -1):
            y2[i, j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2
            tp2 = tp1
            tp1 = imgOut[i, j]
            yp2 = yp1
            yp1 = y2[i, j]
    for i in range(w):
        for j in range(h):
            imgOut[i, j] = c2 * (y1[i, j] + y2[i, j])


def ref_floyd_warshall(a, n):
    path = a["path"]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                path[i, j] = path[i, j] if path[i, j] < path[i, k] + path[k, j] else path[i, k] + path[k, j]


def ref_nussinov(a, n):
    seq, table = a["seq"], a["table"]

    def match(b1, b2):
        return 1 if int(b1) + int(b2) == 3 else 0

    def max_score(s1, s2):
        return s1 if s1 >= s2 else s2

    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if j - 1 >= 0:
                table[i, j] = max_score(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max_score(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < n:
                if i < j - 1:
                    table[i, j] = max_score(table[i, j], table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max_score(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max_score(table[i, j], table[i, k] + table[k + 1, j])


def ref_adi(a, tsteps, n):
    u, v, p, q = a["u"], a["v"], a["p"], a["q"]
    DX = 1.0 / n
    DY = 1.0 / n
    DT = 1.0 / tsteps
    B1, B2 = 2.0, 1.0
    mul1 = B1 * DT / (DX * DX)
    mul2 = B2 * DT / (DY * DY)
    a_ = -mul1 / 2.0
    b = 1.0 + mul1
    c = a_
    d = -mul2 / 2.0
    e = 1.0 + mul2
    f = d
    for t in range(1, tsteps + 1):
        for i in range(1, n - 1):
            v[0, i] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = v[0, i]
            for j in range(1, n - 1):
                p[i, j] = -c / (a_ * p[i, j - 1] + b)
                q[i, j] = (-d * u[j, i - 1] + (1.0 + 2.0 * d) * u[j, i] - f * u[j, i + 1]
                           - a_ * q[i, j - 1]) / (a_ * p[i, j - 1] + b)
            v[n - 1, i] = 1.0
            for j in range(n - 2, 0, -1):
                v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
        for i in range(1, n - 1):
            u[i, 0] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = u[i, 0]
            for j in range(1, n - 1):
                p[i, j] = -f / (d * p[i, j - 1] + e)
                q[i, j] = (-a_ * v[i - 1, j] + (1.0 + 2.0 * a_) * v[i, j] - c * v[i + 1, j]
                           - d * q[i, j - 1]) / (d * p[i, j - 1] + e)
            u[i, n - 1] = 1.0
            for j in range(n - 2, 0, -1):
                u[i, j] = p[i, j] * u[i, j + 1] + q[i, j]


# The stencils below are Jacobi-style within each loop nest (a nest never
# reads what it writes), so whole-array NumPy computes every element the way
# the C does, in the same order of operations.
def ref_fdtd_2d(a, tmax, nx, ny):
    ex, ey, hz, fict = a["ex"], a["ey"], a["hz"], a["_fict_"]
    for t in range(tmax):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def _heat(S):
    c = S[1:-1, 1:-1, 1:-1]
    return (0.125 * (S[2:, 1:-1, 1:-1] - 2.0 * c + S[:-2, 1:-1, 1:-1])
            + 0.125 * (S[1:-1, 2:, 1:-1] - 2.0 * c + S[1:-1, :-2, 1:-1])
            + 0.125 * (S[1:-1, 1:-1, 2:] - 2.0 * c + S[1:-1, 1:-1, :-2])
            + c)


def ref_heat_3d(a, tsteps, n):
    A, B = a["A"], a["B"]
    for t in range(1, tsteps + 1):
        B[1:-1, 1:-1, 1:-1] = _heat(A)
        A[1:-1, 1:-1, 1:-1] = _heat(B)


def ref_jacobi_1d(a, tsteps, n):
    A, B = a["A"], a["B"]
    for t in range(tsteps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def ref_jacobi_2d(a, tsteps, n):
    A, B = a["A"], a["B"]
    for t in range(tsteps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def ref_seidel_2d(a, tsteps, n):
    A = a["A"]
    for t in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1]
                           + A[i, j - 1] + A[i, j] + A[i, j + 1]
                           + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0


# ---------------------------------------------------------------------------
# Well-posed inputs where PolyBench's numerics need them (rng: a seeded
# NumPy generator; the arrays are replaced in `args`).

def _diagonally_dominant(rng, n):
    A = rng.uniform(-1, 1, (n, n))
    return A + np.diag(np.abs(A).sum(axis=1) + 1.0)


def prep_cholesky(args, rng, n):
    M = rng.uniform(-1, 1, (n, n))
    args["A"] = M @ M.T + n * np.eye(n)  # symmetric positive definite


def prep_lu(args, rng, n):
    args["A"] = _diagonally_dominant(rng, n)  # pivots stay away from zero without pivoting


def prep_ludcmp(args, rng, n):
    args["A"] = _diagonally_dominant(rng, n)


def prep_trisolv(args, rng, n):
    args["L"] = _diagonally_dominant(rng, n)  # (only the lower triangle is read)


def prep_durbin(args, rng, n):
    # a Toeplitz matrix with unit diagonal and a geometrically small first
    # row: diagonally dominant, so every |alpha| < 1 and beta stays away from 0
    args["r"] = 0.5 ** np.arange(1, n + 1) * rng.uniform(-1, 1, n)


def prep_floyd_warshall(args, rng, n):
    # nonnegative edge lengths, most of them PolyBench's 999 for "no edge", so
    # shortest paths take several hops and the order of the loops matters
    # (PolyBench's own init_array gives the same paths for every loop order)
    path = rng.integers(1, 100, (n, n))
    path[rng.random((n, n)) < 0.8] = 999
    args["path"] = path.astype(np.int32)


def prep_nussinov(args, rng, n):
    args["seq"] = rng.integers(0, 4, n).astype(np.int8)  # bases A, C, G, U as 0..3


# name: (sizes (MINI, or smaller where noted), scalars, NumPy reference, input preparation)
# gramschmidt: m and n swapped from MINI (m=20 < n=30 makes the columns
# dependent and the result rounding noise); floyd_warshall at n=30 (the
# reference's n^3 Python loop).
KERNELS = {
    "correlation": (dict(m=28, n=32), dict(float_n=32.0), ref_correlation, None),
    "covariance": (dict(m=28, n=32), dict(float_n=32.0), ref_covariance, None),
    "gemm": (dict(ni=20, nj=25, nk=30), dict(alpha=ALPHA, beta=BETA), ref_gemm, None),
    "gemver": (dict(n=40), dict(alpha=ALPHA, beta=BETA), ref_gemver, None),
    "gesummv": (dict(n=30), dict(alpha=ALPHA, beta=BETA), ref_gesummv, None),
    "symm": (dict(m=20, n=30), dict(alpha=ALPHA, beta=BETA), ref_symm, None),
    "syr2k": (dict(n=30, m=20), dict(alpha=ALPHA, beta=BETA), ref_syr2k, None),
    "syrk": (dict(n=30, m=20), dict(alpha=ALPHA, beta=BETA), ref_syrk, None),
    "trmm": (dict(m=20, n=30), dict(alpha=ALPHA), ref_trmm, None),
    "2mm": (dict(ni=16, nj=18, nk=22, nl=24), dict(alpha=ALPHA, beta=BETA), ref_2mm, None),
    "3mm": (dict(ni=16, nj=18, nk=20, nl=22, nm=24), {}, ref_3mm, None),
    "atax": (dict(m=38, n=42), {}, ref_atax, None),
    "bicg": (dict(m=38, n=42), {}, ref_bicg, None),
    "doitgen": (dict(nr=10, nq=8, np=12), {}, ref_doitgen, None),
    "mvt": (dict(n=40), {}, ref_mvt, None),
    "cholesky": (dict(n=40), {}, ref_cholesky, prep_cholesky),
    "durbin": (dict(n=40), {}, ref_durbin, prep_durbin),
    "gramschmidt": (dict(m=30, n=20), {}, ref_gramschmidt, None),
    "lu": (dict(n=40), {}, ref_lu, prep_lu),
    "ludcmp": (dict(n=40), {}, ref_ludcmp, prep_ludcmp),
    "trisolv": (dict(n=40), {}, ref_trisolv, prep_trisolv),
    "deriche": (dict(w=64, h=64), dict(alpha=0.25), ref_deriche, None),  # (PolyBench's alpha)
    "floyd_warshall": (dict(n=30), {}, ref_floyd_warshall, prep_floyd_warshall),
    "nussinov": (dict(n=60), {}, ref_nussinov, prep_nussinov),
    "adi": (dict(tsteps=20, n=20), {}, ref_adi, None),
    "fdtd_2d": (dict(tmax=20, nx=20, ny=30), {}, ref_fdtd_2d, None),
    "heat_3d": (dict(tsteps=20, n=10), {}, ref_heat_3d, None),
    "jacobi_1d": (dict(tsteps=20, n=30), {}, ref_jacobi_1d, None),
    "jacobi_2d": (dict(tsteps=20, n=30), {}, ref_jacobi_2d, None),
    "seidel_2d": (dict(tsteps=20, n=40), {}, ref_seidel_2d, None),
}
NAMES = list(KERNELS)

# Kernels Loom refuses as written, or where it computes something else than
# the C: name -> Loom's message (a strict expected failure of test_numpy).
# None: all 30 run as written and match the references bit for bit.
LOOM_FAILS = {}

# The loopy oracle's outcome where it is not "same": name -> (outcome, reason).
_CYCLE = ("loopy makes a read depend on the writer of its variable, and the values carried from one time "
          "step to the next close a cycle; Loom orders such accesses by the text, as the C does")
LOOPY_NOT_SAME = {
    "gramschmidt": ("loopy-refuses", "DependencyCycleFound: insn_5, insn_2 (loopy makes a read depend on the "
                    "writer of its variable; R and A, carried from one k to the next, close a cycle; Loom orders "
                    "such accesses by the text, as the C does)"),
    "ludcmp": ("loopy-refuses", "CannotBranchDomainTree: iname set 'j2, i1, k2' requires branch in domain tree "
               "(k2's domain beside j2's under i1; lu writes that nest as one domain, ludcmp cannot: its j2 "
               "statements outside k2 would then not run at i1 = 0)"),
    "floyd_warshall": ("differ", "loopy nests the loops i, j, k (the text gives it no loop order); Loom nests them "
                       "k, i, j, the order of the domains, as the C does"),
    "nussinov": ("loopy-refuses", "DependencyTypeInferenceFailure: loopy's text has no int32() cast (written for "
                 "C's promotion of the chars to int in match())"),
    "fdtd_2d": ("loopy-refuses", "DependencyCycleFound: insn_2, insn_1 (" + _CYCLE + ")"),
    "heat_3d": ("loopy-refuses", "DependencyCycleFound: insn, insn_0 (" + _CYCLE + ")"),
    "jacobi_1d": ("loopy-refuses", "DependencyCycleFound: insn, insn_0 (" + _CYCLE + ")"),
    "jacobi_2d": ("loopy-refuses", "DependencyCycleFound: insn, insn_0 (" + _CYCLE + ")"),
    "seidel_2d": ("differ", "loopy nests the loops i, j, t (the text gives it no loop order); Loom nests them "
                  "t, i, j, the order of the domains, as the C does"),
}

# For those, loopy once more with the help that changes nothing the C means:
# each statement after the one before it (loopy's seq_dependencies, the C's
# statement order), the C's loop nesting as loop priorities, and a text
# rewritten where loopy cannot read it (a kernel -> text function).
def _without_int_casts(text):
    out = re.sub(r"int32\((seq\[[^]]*\])\)", r"\1", text)  # (the oracle's int8 bases cannot wrap: [-50, 50))
    assert out != text
    return out


def _one_j2_k2_domain(text):
    # at i1 = 0 the j2 statements then do not run: they copy A[0, j2] onto itself
    out = text.replace("  {[j2]: i1 <= j2 < n}\n  {[k2]: 0 <= k2 < i1}\n", "  {[j2, k2]: i1 <= j2 < n and 0 <= k2 < i1}\n")
    assert out != text
    return out


LOOPY_HELP = {
    "gramschmidt": ([], None), "fdtd_2d": ([], None), "heat_3d": ([], None),
    "jacobi_1d": ([], None), "jacobi_2d": ([], None),
    "floyd_warshall": (["k,i,j"], None), "seidel_2d": (["t,i,j"], None),
    "nussinov": ([], _without_int_casts), "ludcmp": ([], _one_j2_k2_domain),
}


def test_thirty_files():
    assert sorted(f[:-5] for f in os.listdir(POLYBENCH_DIR) if f.endswith(".loom")) == sorted(NAMES)


def _xfail(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=names[n])) if n in names else n
            for n in NAMES]


def _check_against_numpy(name, knl):
    """Runs knl (the kernel as written, or a schedule of it) on the seeded
    inputs and compares every written array with the NumPy reference."""
    sizes, scalars, ref, prep = KERNELS[name]
    args = lp.random_arguments(knl, seed=1, **sizes)
    if prep is not None:
        prep(args, np.random.default_rng(7), **sizes)
    outs = knl(**{k: v.copy() for k, v in args.items()}, **sizes, **scalars)
    written = list(knl._core.written_arrays())
    assert len(outs) == len(written)
    expected = {k: v.copy() for k, v in args.items()}
    ref(expected, **sizes, **scalars)
    for array, got in zip(written, outs):
        want = expected[array]
        if np.issubdtype(want.dtype, np.floating):  # (elements left unwritten may stay NaN-poisoned)
            assert (np.isfinite(want) | np.isnan(args[array])).all(), f"{name}: the reference's {array} is not finite"
        if np.issubdtype(want.dtype, np.integer):
            np.testing.assert_array_equal(got, want, err_msg=f"{name}: {array}")
        else:
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"{name}: {array}")


@needs_cpu
@pytest.mark.parametrize("name", _xfail(LOOM_FAILS))
def test_numpy(name):
    _check_against_numpy(name, lp.kernel_from_text(_text(name), target="cpu"))


# Kernels the automatic space refuses (no loop Loom's checks accept on blocks
# and threads as the nests sketch tries them): name -> why.
# (seidel_2d and nussinov, where every loop carries a dependence as written,
# run as wavefronts: "nests, wavefront"; cholesky and lu right-looking, from
# isl's scheduler: "nests, isl schedule"; floyd-warshall in five phases of
# each k, split around row and column k: "nests, index-set split")
TUNE_REFUSED = {}


@needs_cpu
@pytest.mark.parametrize("name", _xfail(TUNE_REFUSED))
def test_tuned_from_the_automatic_space(name):
    """issue 49: a few trials of the automatic space give every kernel a winner
    that uses block parallelism (or, for trisolv, durbin and jacobi-1d, one block's threads) (the space's own best: the kernel as written,
    trial 0, may be faster at these sizes on the CPU) and matches NumPy. Some
    loop on blocks, not every statement: lu's, durbin's and trisolv's
    accumulations stay in one thread (trisolv, distributed, has only its
    initialization on blocks)."""
    sizes = KERNELS[name][0]
    knl = lp.kernel_from_text(_text(name), target="cpu")
    r = lp.tune(knl, parameters=dict(sizes), trials=6, target="cpu", progress=False, min_time=0.001, references=False, seed=2,
                settle=False)
    # blocks, or one block's threads where the only parallelism is sums
    # inside a sequential loop (trisolv, durbin: "nests, one block") or the
    # sweeps of a time loop too small for a launch each (jacobi-1d: "nests,
    # one block, time loop": every sweep's loop on l.0, nothing on blocks)
    script = r.best["script"]
    one_block = "inner_tag=l.0" in script and ("run_on_first_thread" in script or "g." not in script)
    assert "outer_tag=g.0" in script or one_block, script
    _check_against_numpy(name, r.kernel)



# Sizes for the loopy oracle: small (loopy's code generation and the C
# compiler's run dominate), every loop still iterating more than once.
ORACLE_SIZES = {
    "correlation": dict(m=5, n=7), "covariance": dict(m=5, n=7),
    "gemm": dict(ni=4, nj=5, nk=6), "gemver": dict(n=6), "gesummv": dict(n=6),
    "symm": dict(m=5, n=6), "syr2k": dict(n=6, m=5), "syrk": dict(n=6, m=5), "trmm": dict(m=5, n=6),
    "2mm": dict(ni=4, nj=5, nk=6, nl=7), "3mm": dict(ni=4, nj=5, nk=6, nl=7, nm=8),
    "atax": dict(m=5, n=6), "bicg": dict(m=5, n=6), "doitgen": dict(nr=3, nq=4, np=5), "mvt": dict(n=6),
    "cholesky": dict(n=6), "durbin": dict(n=6), "gramschmidt": dict(m=7, n=5), "lu": dict(n=6),
    "ludcmp": dict(n=6), "trisolv": dict(n=6),
    "deriche": dict(w=5, h=6), "floyd_warshall": dict(n=6), "nussinov": dict(n=7),
    "adi": dict(tsteps=3, n=6), "fdtd_2d": dict(tmax=3, nx=5, ny=6), "heat_3d": dict(tsteps=3, n=5),
    "jacobi_1d": dict(tsteps=3, n=7), "jacobi_2d": dict(tsteps=3, n=6), "seidel_2d": dict(tsteps=3, n=6),
}


@needs_cpu
@pytest.mark.parametrize("name", NAMES)
def test_loopy_oracle(name):
    pytest.importorskip("loopy")
    from loopy_oracle import run_both

    verdict = run_both(_text(name), ORACLE_SIZES[name], seed=3, target="cpu")
    if name in LOOPY_NOT_SAME:
        outcome, reason = LOOPY_NOT_SAME[name]
        assert verdict.outcome == outcome, f"{name}: listed as {outcome} ({reason}), now {verdict}"
    else:
        assert verdict.outcome == "same", str(verdict)


@needs_cpu
@pytest.mark.parametrize("name", sorted(LOOPY_HELP))
def test_loopy_in_c_order(name):
    """The kernels of LOOPY_NOT_SAME, given to loopy in the C's statement order
    and loop nesting (LOOPY_HELP), against Loom running the file as written."""
    loopy = pytest.importorskip("loopy")
    import loopy_oracle

    priorities, rewrite = LOOPY_HELP[name]
    text = _text(name)
    sizes = ORACLE_SIZES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lknl = loopy_oracle.to_loopy(rewrite(text) if rewrite else text, parameters=list(sizes), text_order=True)
        for p in priorities:
            lknl = loopy.prioritize_loops(lknl, p)
        knl = lp.kernel_from_text(text, target="cpu")
        arrays = lp.random_arguments(knl, seed=3, **sizes)
        for_loopy = {k: v.copy() for k, v in arrays.items()}
        for_loom = {k: v.copy() for k, v in arrays.items()}
        _, loopy_out = lknl(**for_loopy, **sizes)
    knl(**for_loom, **sizes)
    for array in knl._core.written_arrays():
        diff = loopy_oracle._same(loopy_out.get(array, for_loopy[array]), for_loom[array], for_loom[array].dtype)
        assert not diff, f"{name}: {array}: {diff}"
