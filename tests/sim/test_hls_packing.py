"""Two multiplies per DSP (mvu.h packed_products, Xilinx WP486): exhaustive over the weight pairs.

P = (w0 + w1*2^18) * x must give w0*x (the sign-extended low 18 bits) and w1*x ((P >> 18) plus the
borrow of a negative low field) for every pair of 8-bit weights and the extreme activations of int8
and uint8, plus random triples; both C-sim views are compiled (the 64-bit product and, with
-DHLSGEN_EXACT_ROM, the ap_int 27 x 18 product Vitis sees). Negative control: the kernel without the
borrow correction must fail. The network-level bit-exactness of packed layers is covered by every
csim test (int8 MVU layers with even PE pack; see `hls_pack_fits` in hw/layers/mvu.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hlsgen.backends.render import TEMPLATES
from hlsgen.hw.layers.mvu import hls_pack_fits as pack_lanes
from hlsgen.tools.csim_build import BASE_FLAGS, compiler, header_dir

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include "kernels/mvu.h"

template <int W_BITS, class X>
long check(int x_lo, int x_hi, int x_step) {
    long bad = 0;
    const int lo = -(1 << (W_BITS - 1)), hi = (1 << (W_BITS - 1)) - 1;
    for (int w0 = lo; w0 <= hi; w0++)
        for (int w1 = lo; w1 <= hi; w1++)
            for (int xv = x_lo; xv <= x_hi; xv += x_step) {
                ap_int<18> p0;
                ap_int<W_BITS + X::width + 1> p1;
                hlsgen::packed_products<W_BITS>(ap_int<W_BITS>(w0), ap_int<W_BITS>(w1), X(xv), p0, p1);
                if (p0.to_int64() != (long long)w0 * xv || p1.to_int64() != (long long)w1 * xv) {
                    if (bad < 3) std::printf("w0=%d w1=%d x=%d: %lld %lld\n", w0, w1, xv, p0.to_int64(), p1.to_int64());
                    bad++;
                }
            }
    return bad;
}

int main() {
    long bad = check<8, ap_int<8> >(-128, 127, 17) + check<8, ap_int<8> >(-128, -128, 1)
             + check<8, ap_int<8> >(127, 127, 1) + check<8, ap_int<8> >(-1, 1, 1)
             + check<8, ap_uint<8> >(0, 255, 15) + check<8, ap_uint<8> >(254, 255, 1)
             + check<4, ap_int<8> >(-128, 127, 1) + check<8, ap_int<9> >(-256, 255, 31)
             + check<6, ap_uint<8> >(0, 255, 1);
    std::printf("%ld mismatches\n", bad);
    return bad != 0;
}
"""


def _run(tmp_path: Path, kernels: Path, exact: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "t.cpp").write_text(PROGRAM)
    exe = tmp_path / ("t_exact" if exact else "t")
    flags = [*BASE_FLAGS, *(["-DHLSGEN_EXACT_ROM"] if exact else []), "-isystem", str(header_dir()),
             "-I", str(kernels.parent), "-Wno-unknown-pragmas"]
    subprocess.run([compiler(), *flags, str(tmp_path / "t.cpp"), "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True)


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    dst = tmp_path / "src" / "kernels"
    shutil.copytree(TEMPLATES / "hls" / "kernels", dst)
    return dst


@pytest.mark.parametrize("exact", [False, True])
def test_packed_products_are_exact(kernels: Path, tmp_path: Path, exact: bool) -> None:
    r = _run(tmp_path, kernels, exact)
    assert r.returncode == 0, r.stdout
    assert r.stdout.strip().endswith("0 mismatches")


def test_negative_control_without_the_borrow(kernels: Path, tmp_path: Path) -> None:
    mvu = kernels / "mvu.h"
    text = mvu.read_text()
    broken = text.replace("ap_int<2>(prod[17] ? 1 : 0)", "ap_int<2>(0)")
    assert broken != text
    mvu.write_text(broken)
    r = _run(tmp_path, kernels, False)
    assert r.returncode == 1 and not r.stdout.strip().endswith(" 0 mismatches")


def test_which_layers_pack() -> None:
    assert pack_lanes(1, 8, 8, True, 4) and pack_lanes(1, 8, 8, False, 2)  # int8 x int8, int8 x uint8
    assert pack_lanes(1, 4, 8, True, 3)  # odd PE: lanes 0+1 packed, lane 2 alone
    assert not pack_lanes(2, 8, 8, True, 4)  # grouped: lanes read different activations
    assert not pack_lanes(1, 8, 8, True, 1)  # one lane: nothing to pair
    assert not pack_lanes(1, 8, 10, False, 4)  # |w*x| may reach 2^17: does not fit the low field
    assert not pack_lanes(1, 9, 8, True, 4)  # a 9-bit weight: w1 * 2^18 does not fit the 27-bit port
