// hlsgen HLS kernels: the matrix-vector unit of conv (KxK, pointwise, grouped) and dense layers.
//
// Per output pixel the unit reads TAPS input beats (a conv's window from the sliding-window
// generator, or a dense layer's whole input vector: TAPS = input pixels) and computes COUT
// accumulators, PE output channels at a time, each from SIMD input channels per cycle:
//   for fo < FOLD_O, t < TAPS, fi < FOLD_I (pipelined, II=1):  PE x SIMD multiply-accumulates
// so a pixel takes FOLD_O * TAPS * FOLD_I cycles (hlsgen.hw.lower's cycle model).
//   acc[o] = B[o] + sum over taps t and group-input channels k of x[t][g(o)*CIN_G + k] * W(o, t, k)
// with g(o) = o / COUT_G the group of output channel o. The bias already holds -zp_x * sum(W), and
// padding taps hold zp_x, so the asymmetric input zero point costs nothing here.
// The epilogue (epilogue.h) requantizes every accumulator, optionally adding a residual skip beat.
//
// Tables (weights.h), laid out so that one word feeds all PE x SIMD multipliers in one cycle:
//   W[FOLD_O*TAPS*FOLD_I][PE*SIMD]  word (fo, t, fi), lane p*SIMD+s: weight of output channel
//                                   fo*PE+p, tap t, group-input channel fi*SIMD+s (0 beyond COUT/CIN_G)
//   B, M, S [FOLD_O][PE]; MN [FOLD_O or 1][PE] (LeakyReLU only); SM [FOLD_O][PE] (residual only);
//   M1, S1 [M1_FOLD][PE], MN1 [MN1_FOLD][PE], B2 [B2_FOLD][PE]: the two-step epilogue's step 1 and
//   step-2 bias (epilogue.h); a FOLD of 1 (a dummy row) where the layer has none
//
// Config C: TAPS, OUT_PIXELS, CIN, COUT, GROUPS, CIN_G, COUT_G, PE, SIMD, FOLD_O, FOLD_I,
//           IN_BITS, IN_SIGNED, W_BITS, ACC_BITS, MULT_BITS, OUT_BITS, ZP, LO, HI, ROUNDING,
//           HAS_MULT_NEG, RESIDUAL, SKIP_ZP, SKIP_BITS, SKIP_SIGNED, MN_FOLD, SM_FOLD, TWO_STEP,
//           MID_ZP, MID_LO, MID_HI, MID_X_BITS, MID_MULT_BITS, HAS_MID_NEG, HAS_POST_BIAS,
//           POST_BIAS_BITS, M1_FOLD, MN1_FOLD, B2_FOLD and the types in_beat_t, out_beat_t,
//           skip_beat_t, w_t, bias_t, mult_t, shift_t, mid_mult_t, mid_shift_t, post_bias_t.
#ifndef HLSGEN_MVU_H
#define HLSGEN_MVU_H

#include "epilogue.h"
#include "hlsgen_common.h"

namespace hlsgen {

// Unpack the TAPS beats of one output pixel into x[tap][channel].
template <class C>
void read_taps(hls::stream<typename C::in_beat_t>& in, ap_int<C::IN_BITS + 1> x[C::TAPS][C::CIN]) {
#pragma HLS INLINE
READ_TAP:
    for (int t = 0; t < C::TAPS; t++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t beat = in.read();
    UNPACK:
        for (int c = 0; c < C::CIN; c++) {
#pragma HLS UNROLL
            x[t][c] = get_channel<C::IN_BITS, C::IN_SIGNED>(beat, c);
        }
    }
}

// The accumulators of output channels fo*PE .. fo*PE+PE-1.
template <class C>
void mvu_fold(const ap_int<C::IN_BITS + 1> x[C::TAPS][C::CIN], const typename C::w_t W[][C::PE * C::SIMD],
              const typename C::bias_t B[][C::PE], int fo, ap_int<C::ACC_BITS> acc[C::PE]) {
#pragma HLS INLINE
INIT:
    for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
        acc[p] = B[fo][p];
    }
TAP:
    for (int t = 0; t < C::TAPS; t++) {
    FOLD_IN:
        for (int fi = 0; fi < C::FOLD_I; fi++) {
#pragma HLS PIPELINE II=1
            const int word = (fo * C::TAPS + t) * C::FOLD_I + fi;
        LANE_PE:
            for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
                const int group = (fo * C::PE + p) / C::COUT_G;  // >= GROUPS only in padding lanes
            LANE_SIMD:
                for (int s = 0; s < C::SIMD; s++) {
#pragma HLS UNROLL
                    const int k = fi * C::SIMD + s;
                    if (k < C::CIN_G && group < C::GROUPS) {
                        ap_int<C::W_BITS> w = W[word][p * C::SIMD + s];
                        acc[p] += x[t][group * C::CIN_G + k] * w;
                    }
                }
            }
        }
    }
}

// One output pixel: every fold's accumulators, requantized into one packed beat.
template <class C>
typename C::out_beat_t mvu_pixel(const ap_int<C::IN_BITS + 1> x[C::TAPS][C::CIN], const typename C::skip_beat_t& skip,
                                 const typename C::w_t W[][C::PE * C::SIMD], const typename C::bias_t B[][C::PE],
                                 const typename C::mult_t M[][C::PE], const typename C::mult_t MN[][C::PE],
                                 const typename C::mult_t SM[][C::PE], const typename C::shift_t S[][C::PE],
        const typename C::mid_mult_t M1[][C::PE], const typename C::mid_mult_t MN1[][C::PE],
        const typename C::mid_shift_t S1[][C::PE], const typename C::post_bias_t B2[][C::PE]) {
#pragma HLS INLINE
    typename C::out_beat_t y = 0;
FOLD_OUT:
    for (int fo = 0; fo < C::FOLD_O; fo++) {
        ap_int<C::ACC_BITS> acc[C::PE];
#pragma HLS ARRAY_PARTITION variable=acc complete
        mvu_fold<C>(x, W, B, fo, acc);
        epilogue_fold<C>(acc, skip, fo, M, MN, SM, S, M1, MN1, S1, B2, y);
    }
    return y;
}

// Conv (after a sliding-window generator, or directly on the input for a 1x1 stride-1 conv).
template <class C>
void conv_mvu(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
              const typename C::w_t W[C::FOLD_O * C::TAPS * C::FOLD_I][C::PE * C::SIMD],
              const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::FOLD_O][C::PE],
              const typename C::mult_t MN[C::MN_FOLD][C::PE], const typename C::shift_t S[C::FOLD_O][C::PE],
        const typename C::mid_mult_t M1[C::M1_FOLD][C::PE], const typename C::mid_mult_t MN1[C::MN1_FOLD][C::PE],
        const typename C::mid_shift_t S1[C::M1_FOLD][C::PE], const typename C::post_bias_t B2[C::B2_FOLD][C::PE]) {
#pragma HLS ARRAY_PARTITION variable=W complete dim=2
#pragma HLS ARRAY_PARTITION variable=B complete dim=2
#pragma HLS ARRAY_PARTITION variable=M complete dim=2
#pragma HLS ARRAY_PARTITION variable=MN complete dim=2
#pragma HLS ARRAY_PARTITION variable=S complete dim=2
#pragma HLS ARRAY_PARTITION variable=M1 complete dim=2
#pragma HLS ARRAY_PARTITION variable=MN1 complete dim=2
#pragma HLS ARRAY_PARTITION variable=S1 complete dim=2
#pragma HLS ARRAY_PARTITION variable=B2 complete dim=2
    const typename C::skip_beat_t no_skip = 0;
PIXEL:
    for (int px = 0; px < C::OUT_PIXELS; px++) {
        ap_int<C::IN_BITS + 1> x[C::TAPS][C::CIN];
#pragma HLS ARRAY_PARTITION variable=x complete dim=2
        read_taps<C>(in, x);
        out.write(mvu_pixel<C>(x, no_skip, W, B, M, MN, M, S, M1, MN1, S1, B2));
    }
}

// Conv whose epilogue adds a residual branch, read beat by beat from `skip`.
template <class C>
void conv_mvu_residual(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::skip_beat_t>& skip,
                       hls::stream<typename C::out_beat_t>& out,
                       const typename C::w_t W[C::FOLD_O * C::TAPS * C::FOLD_I][C::PE * C::SIMD],
                       const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::FOLD_O][C::PE],
                       const typename C::mult_t MN[C::MN_FOLD][C::PE], const typename C::mult_t SM[C::SM_FOLD][C::PE],
                       const typename C::shift_t S[C::FOLD_O][C::PE],
        const typename C::mid_mult_t M1[C::M1_FOLD][C::PE], const typename C::mid_mult_t MN1[C::MN1_FOLD][C::PE],
        const typename C::mid_shift_t S1[C::M1_FOLD][C::PE], const typename C::post_bias_t B2[C::B2_FOLD][C::PE]) {
#pragma HLS ARRAY_PARTITION variable=W complete dim=2
#pragma HLS ARRAY_PARTITION variable=B complete dim=2
#pragma HLS ARRAY_PARTITION variable=M complete dim=2
#pragma HLS ARRAY_PARTITION variable=MN complete dim=2
#pragma HLS ARRAY_PARTITION variable=SM complete dim=2
#pragma HLS ARRAY_PARTITION variable=S complete dim=2
#pragma HLS ARRAY_PARTITION variable=M1 complete dim=2
#pragma HLS ARRAY_PARTITION variable=MN1 complete dim=2
#pragma HLS ARRAY_PARTITION variable=S1 complete dim=2
#pragma HLS ARRAY_PARTITION variable=B2 complete dim=2
PIXEL:
    for (int px = 0; px < C::OUT_PIXELS; px++) {
        ap_int<C::IN_BITS + 1> x[C::TAPS][C::CIN];
#pragma HLS ARRAY_PARTITION variable=x complete dim=2
        read_taps<C>(in, x);
        const typename C::skip_beat_t s = skip.read();
        out.write(mvu_pixel<C>(x, s, W, B, M, MN, SM, S, M1, MN1, S1, B2));
    }
}

// Dense (Gemm): the whole input vector, in stream order, is one "window" of TAPS = input pixels;
// the weight columns were permuted into that order by the compiler.
template <class C>
void dense(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
           const typename C::w_t W[C::FOLD_O * C::TAPS * C::FOLD_I][C::PE * C::SIMD],
           const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::FOLD_O][C::PE],
           const typename C::mult_t MN[C::MN_FOLD][C::PE], const typename C::shift_t S[C::FOLD_O][C::PE],
        const typename C::mid_mult_t M1[C::M1_FOLD][C::PE], const typename C::mid_mult_t MN1[C::MN1_FOLD][C::PE],
        const typename C::mid_shift_t S1[C::M1_FOLD][C::PE], const typename C::post_bias_t B2[C::B2_FOLD][C::PE]) {
    static_assert(C::OUT_PIXELS == 1 && C::GROUPS == 1, "a dense layer makes one pixel, ungrouped");
    conv_mvu<C>(in, out, W, B, M, MN, S, M1, MN1, S1, B2);
}

}  // namespace hlsgen

#endif
