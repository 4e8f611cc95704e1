// hlsgen HLS kernels: the fused requant epilogue, shared by every layer that rescales.
//
// The contract of hlsgen.numerics (docs/numerics.md), bit for bit (numerics.fused_epilogue):
//   with C::TWO_STEP (the model quantizes t between the layer and the ops fused after it):
//     t = clamp(MID_ZP + round_shift(acc * M1[c], S1[c]), MID_LO, MID_HI)   (MN1[c] where negative)
//     x = t - MID_ZP                                                        (MID_X_BITS bits)
//   else x = acc;
//   v = x * M[c]                (M_neg[c] instead where that product is negative: LeakyReLU)
//       + (skip - SKIP_ZP) * SM[c]   (residual add from a second stream, its own scale)
//       + B2[c]                      (C::HAS_POST_BIAS: BatchNorm / bias after the intermediate)
//   y = clamp(ZP + round_shift(v, S[c]), LO, HI)
// round_shift divides by 2^S and rounds ties to even (HALF_EVEN) or toward +inf (HALF_UP). ReLU is
// LO = ZP, ReLU6/Clip a lowered HI; LO/HI at the type's ends are the saturation. The product is
// formed at its exact width (ACC_BITS + MULT_BITS <= 63 bits, checked by the compiler) and all
// later arithmetic is 64-bit (the sum and the rounding; HLS trims constant-zero high bits).
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

// clamp(zp + round_shift(v, shift), lo, hi).
template <int ROUNDING>
ap_int<64> round_clamp(const ap_int<64>& v, int shift, int zp, int lo, int hi) {
#pragma HLS INLINE
    ap_int<64> y = round_shift<ROUNDING>(v, shift) + zp;
    if (y < lo) y = lo;
    if (y > hi) y = hi;
    return y;
}

// y = clamp(ZP + round_shift(v, shift), LO, HI) with the layer's output constants.
template <class C>
ap_int<64> requant(const ap_int<64>& v, int shift) {
#pragma HLS INLINE
    return round_clamp<C::ROUNDING>(v, shift, C::ZP, C::LO, C::HI);
}

// Step 1 of a two-step epilogue: the model's own quantizer of the intermediate tensor, minus its
// zero point (x = t - MID_ZP, at most MID_X_BITS bits).
template <class C>
ap_int<C::MID_X_BITS> mid_step(const ap_int<C::ACC_BITS>& acc, const typename C::mid_mult_t& m1,
                               const typename C::mid_mult_t& m1_neg, int s1) {
#pragma HLS INLINE
    ap_int<C::MID_MULT_BITS> m = m1;
    ap_int<C::MID_MULT_BITS> mn = C::HAS_MID_NEG ? ap_int<C::MID_MULT_BITS>(m1_neg) : m;
    ap_int<64> v1 = scale_acc<C::HAS_MID_NEG, C::MID_MULT_BITS>(acc, m, mn);
    ap_int<C::MID_X_BITS> x = round_clamp<C::ROUNDING>(v1, s1, C::MID_ZP, C::MID_LO, C::MID_HI) - C::MID_ZP;
    return x;
}

// The epilogue of one PE lane of a matrix-vector layer: the requantized code of the channel whose
// accumulator is `acc`. The lane's per-channel parameters come from [NF][PE] ROMs read at the fold
// counter (the caller), so one requant unit per lane is time-shared over NF output channels.
// `skip` is the channel's residual code (exact type, C::RESIDUAL only), added at its own scale SM:
// the skip multiplier has its own type (skip_mult_t, SKIP_MULT_BITS), not the requant multiplier's.
template <class C>
ap_int<64> epilogue_lane(const ap_int<C::ACC_BITS>& acc, const typename code_type<C::SKIP_BITS, C::SKIP_SIGNED>::t& skip,
                         const typename C::mult_t& m_rom, const typename C::mult_t& mn_rom,
                         const typename C::skip_mult_t& sm_rom, const typename C::shift_t& s_rom,
                         const typename C::mid_mult_t& m1_rom, const typename C::mid_mult_t& mn1_rom,
                         const typename C::mid_shift_t& s1_rom, const typename C::post_bias_t& b2_rom) {
#pragma HLS INLINE
    const int skip_zp = C::SKIP_ZP;
    ap_int<C::MULT_BITS> m = m_rom;
    ap_int<C::MULT_BITS> m_neg = C::HAS_MULT_NEG ? ap_int<C::MULT_BITS>(mn_rom) : m;
    ap_int<64> v;
    if (C::TWO_STEP) {
        ap_int<C::MID_X_BITS> x = mid_step<C>(acc, m1_rom, mn1_rom, s1_rom);
        v = scale_acc<C::HAS_MULT_NEG, C::MULT_BITS>(x, m, m_neg);
    } else {
        v = scale_acc<C::HAS_MULT_NEG, C::MULT_BITS>(acc, m, m_neg);
    }
    if (C::RESIDUAL) {
        ap_int<C::SKIP_BITS + 2> d = skip - skip_zp;
        ap_int<C::SKIP_MULT_BITS> sm = sm_rom;
        v += d * sm;
    }
    if (C::HAS_POST_BIAS) {
        ap_int<C::POST_BIAS_BITS> b2 = b2_rom;
        v += b2;
    }
    return requant<C>(v, s_rom);
}

}  // namespace hlsgen

#endif
