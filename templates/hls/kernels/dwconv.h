// hlsgen HLS kernels: depthwise convolution (groups = channels, one weight tap per channel).
//
// Per output pixel the unit reads the K_H*K_W window beats from the sliding-window generator and
// computes, PE channels at a time, acc[o] = B[o] + sum over taps t of x[t][o] * W(o, t):
//   for fo < FOLD_O, t < TAPS (pipelined, II=1): PE multiply-accumulates
// so a pixel takes FOLD_O * TAPS cycles. The epilogue is the same as the conv unit's.
//
// Tables: W[FOLD_O*TAPS][PE] word (fo, t), lane p: weight of channel fo*PE+p at tap t (0 beyond
// COUT); B, M, S [FOLD_O][PE]; MN [MN_FOLD][PE]; SM [SM_FOLD][PE].
// Config C: as mvu.h (CIN == COUT == GROUPS, SIMD = 1).
#ifndef HLSGEN_DWCONV_H
#define HLSGEN_DWCONV_H

#include "epilogue.h"
#include "hlsgen_common.h"
#include "mvu.h"

namespace hlsgen {

template <class C>
typename C::out_beat_t dwconv_pixel(const ap_int<C::IN_BITS + 1> x[C::TAPS][C::CIN],
                                    const typename C::skip_beat_t& skip, const typename C::w_t W[][C::PE],
                                    const typename C::bias_t B[][C::PE], const typename C::mult_t M[][C::PE],
                                    const typename C::mult_t MN[][C::PE], const typename C::mult_t SM[][C::PE],
                                    const typename C::shift_t S[][C::PE],
        const typename C::mid_mult_t M1[][C::PE], const typename C::mid_mult_t MN1[][C::PE],
        const typename C::mid_shift_t S1[][C::PE], const typename C::post_bias_t B2[][C::PE]) {
#pragma HLS INLINE
    typename C::out_beat_t y = 0;
FOLD_OUT:
    for (int fo = 0; fo < C::FOLD_O; fo++) {
        ap_int<C::ACC_BITS> acc[C::PE];
#pragma HLS ARRAY_PARTITION variable=acc complete
    INIT:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            acc[p] = B[fo][p];
        }
    TAP:
        for (int t = 0; t < C::TAPS; t++) {
#pragma HLS PIPELINE II=1
        LANE_PE:
            for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
                const int o = fo * C::PE + p;
                if (o < C::COUT) {
                    ap_int<C::W_BITS> w = W[fo * C::TAPS + t][p];
                    acc[p] += x[t][o] * w;
                }
            }
        }
        epilogue_fold<C>(acc, skip, fo, M, MN, SM, S, M1, MN1, S1, B2, y);
    }
    return y;
}

template <class C>
void dwconv_mvu(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                const typename C::w_t W[C::FOLD_O * C::TAPS][C::PE], const typename C::bias_t B[C::FOLD_O][C::PE],
                const typename C::mult_t M[C::FOLD_O][C::PE], const typename C::mult_t MN[C::MN_FOLD][C::PE],
                const typename C::shift_t S[C::FOLD_O][C::PE],
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
        out.write(dwconv_pixel<C>(x, no_skip, W, B, M, MN, M, S, M1, MN1, S1, B2));
    }
}

template <class C>
void dwconv_mvu_residual(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::skip_beat_t>& skip,
                         hls::stream<typename C::out_beat_t>& out, const typename C::w_t W[C::FOLD_O * C::TAPS][C::PE],
                         const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::FOLD_O][C::PE],
                         const typename C::mult_t MN[C::MN_FOLD][C::PE],
                         const typename C::mult_t SM[C::SM_FOLD][C::PE], const typename C::shift_t S[C::FOLD_O][C::PE],
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
        out.write(dwconv_pixel<C>(x, s, W, B, M, MN, SM, S, M1, MN1, S1, B2));
    }
}

}  // namespace hlsgen

#endif
