// hlsgen HLS kernels: the fused requant epilogue, shared by every layer that rescales.
//
// The contract of hlsgen.numerics (docs/numerics.md), bit for bit:
//   v = acc * M[c]              (M_neg[c] instead where that product is negative: LeakyReLU)
//       + (skip - SKIP_ZP) * SM[c]   (residual add from a second stream, its own scale)
//   y = clamp(ZP + round_shift(v, S[c]), LO, HI)
// round_shift divides by 2^S and rounds ties to even (HALF_EVEN) or toward +inf (HALF_UP). ReLU is
// LO = ZP, ReLU6/Clip a lowered HI; LO/HI at the type's ends are the saturation. The product is
// formed at its exact width (ACC_BITS + MULT_BITS <= 63 bits, checked by the compiler) and all
// later arithmetic is 64-bit.
#ifndef HLSGEN_EPILOGUE_H
#define HLSGEN_EPILOGUE_H

#include "hlsgen_common.h"

namespace hlsgen {

// round(v / 2^s) for 0 <= s <= 62 with the tie rule ROUNDING.
template <int ROUNDING>
ap_int<64> round_shift(const ap_int<64>& v, int s) {
#pragma HLS INLINE
    if (s == 0) return v;
    ap_int<64> q = v >> s;          // floor(v / 2^s): arithmetic shift
    ap_int<64> r = v - (q << s);    // remainder, 0 <= r < 2^s
    ap_int<64> half = ap_int<64>(1) << (s - 1);
    bool up = (ROUNDING == HALF_UP) ? (r >= half) : (r > half || (r == half && q[0] == 1));
    ap_int<64> result = q;
    if (up) result = q + 1;
    return result;
}

// v = acc * m, or acc * m_neg where acc * m < 0 (only when the layer has a LeakyReLU).
template <int HAS_MULT_NEG, int MULT_BITS, class ACC>
ap_int<64> scale_acc(const ACC& acc, const ap_int<MULT_BITS>& m, const ap_int<MULT_BITS>& m_neg) {
#pragma HLS INLINE
    ap_int<64> v = acc * m;
    if (HAS_MULT_NEG && v < 0) v = acc * m_neg;
    return v;
}

// y = clamp(ZP + round_shift(v, shift), LO, HI) with the layer's output constants.
template <class C>
ap_int<64> requant(const ap_int<64>& v, int shift) {
#pragma HLS INLINE
    const int zp = C::ZP, lo = C::LO, hi = C::HI;
    ap_int<64> y = round_shift<C::ROUNDING>(v, shift) + zp;
    if (y < lo) y = lo;
    if (y > hi) y = hi;
    return y;
}

// The epilogue of PE output channels of a matrix-vector layer (fold fo): for every lane p, the
// channel o = fo*PE + p (if it exists) of `y` gets the requantized acc[p]. With C::RESIDUAL the
// skip code of channel o, taken from the skip beat, is added at its own scale (SM).
template <class C>
void epilogue_fold(const ap_int<C::ACC_BITS> acc[C::PE], const typename C::skip_beat_t& skip, int fo,
                   const typename C::mult_t M[][C::PE], const typename C::mult_t MN[][C::PE],
                   const typename C::mult_t SM[][C::PE], const typename C::shift_t S[][C::PE],
                   typename C::out_beat_t& y) {
#pragma HLS INLINE
    const int skip_zp = C::SKIP_ZP;
EPILOGUE:
    for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
        const int o = fo * C::PE + p;
        if (o < C::COUT) {
            ap_int<C::MULT_BITS> m = M[fo][p];
            ap_int<C::MULT_BITS> m_neg = C::HAS_MULT_NEG ? ap_int<C::MULT_BITS>(MN[fo][p]) : m;
            ap_int<64> v = scale_acc<C::HAS_MULT_NEG, C::MULT_BITS>(acc[p], m, m_neg);
            if (C::RESIDUAL) {
                ap_int<C::SKIP_BITS + 2> s = get_channel<C::SKIP_BITS, C::SKIP_SIGNED>(skip, o) - skip_zp;
                ap_int<C::MULT_BITS> sm = SM[fo][p];
                v += s * sm;
            }
            set_channel<C::OUT_BITS>(y, o, requant<C>(v, S[fo][p]));
        }
    }
}

}  // namespace hlsgen

#endif
