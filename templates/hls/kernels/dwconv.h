// hlsgen HLS kernels: depthwise convolution (groups = channels, one weight tap per channel).
//
// The matrix-vector unit of mvu.h with SIMD = 1, FOLD_I = 1, CIN_G = 1, COUT_G = 1: per output pixel
//   for nf < FOLD_O, t < TAPS (one flattened II=1 loop): PE multiply-accumulates, lane p on channel
//   nf*PE + p of tap t, requantized in the pipeline on the last tap of the fold
// so a pixel takes FOLD_O * TAPS cycles. Tables as mvu.h: W[PE][FOLD_O*TAPS] (lane p, word (nf, t)).
// Config C: as mvu.h (CIN == COUT == GROUPS, SIMD = 1).
#ifndef HLSGEN_DWCONV_H
#define HLSGEN_DWCONV_H

#include "hlsgen_common.h"
#include "mvu.h"

namespace hlsgen {

template <class C>
void dwconv_mvu(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                const typename C::w_t W[C::PE][C::WORDS * C::SIMD], const typename C::bias_t B[C::FOLD_O][C::PE],
                const typename C::mult_t M[C::RQ_FOLD][C::RQ], const typename C::mult_t MN[C::MN_FOLD][C::RQ],
                const typename C::shift_t S[C::RQ_FOLD][C::RQ], const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
                const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ],
                const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ], const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    static_assert(C::SIMD == 1 && C::CIN_G == 1 && C::GROUPS == C::COUT, "depthwise: one channel per group");
    conv_mvu<C>(in, out, W, B, M, MN, S, M1, MN1, S1, B2);
}

template <class C>
void dwconv_mvu_residual(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::skip_beat_t>& skip,
                         hls::stream<typename C::out_beat_t>& out, const typename C::w_t W[C::PE][C::WORDS * C::SIMD],
                         const typename C::bias_t B[C::FOLD_O][C::PE], const typename C::mult_t M[C::RQ_FOLD][C::RQ],
                         const typename C::mult_t MN[C::MN_FOLD][C::RQ],
                         const typename C::skip_mult_t SM[C::SM_FOLD][C::RQ], const typename C::shift_t S[C::RQ_FOLD][C::RQ],
                         const typename C::mid_mult_t M1[C::M1_FOLD][C::RQ],
                         const typename C::mid_mult_t MN1[C::MN1_FOLD][C::RQ],
                         const typename C::mid_shift_t S1[C::M1_FOLD][C::RQ],
                         const typename C::post_bias_t B2[C::B2_FOLD][C::RQ]) {
    static_assert(C::SIMD == 1 && C::CIN_G == 1 && C::GROUPS == C::COUT, "depthwise: one channel per group");
    conv_mvu_residual<C>(in, skip, out, W, B, M, MN, SM, S, M1, MN1, S1, B2);
}

}  // namespace hlsgen

#endif
