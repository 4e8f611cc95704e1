// hlsgen HLS kernels: max and average pooling (windowed and global).
//
// Windowed pools read K_H*K_W window beats per output pixel from the sliding-window generator
// (padding taps hold PAD_VALUE: the lowest code for max, the input zero point for average); global
// pools read the whole frame directly. All channels of a pixel are processed in parallel, one
// beat per cycle.
//   max:      y[c] = max over taps of x[c]                      (integer domain, no rescaling)
//   average:  v = (sum over taps of x[c] - TAPS*X_ZP) * M[c];  y = clamp(ZP + round_shift(v, S[c]), LO, HI)
// Average pools divide by the kernel area (TAPS) through M; tables M, S are [CHANNELS].
//
// Config C: OUT_PIXELS, TAPS, CHANNELS, IN_BITS, IN_SIGNED, OUT_BITS, in_beat_t, out_beat_t; average
//           pools also X_ZP, ACC_BITS, MULT_BITS, ZP, LO, HI, ROUNDING, mult_t, shift_t. Global
//           pools use IN_PIXELS (the frame) as their TAPS.
#ifndef HLSGEN_POOL_H
#define HLSGEN_POOL_H

#include "epilogue.h"
#include "hlsgen_common.h"

namespace hlsgen {

// Max over N beats of `in`, per channel.
template <class C, int N>
typename C::out_beat_t max_of_beats(hls::stream<typename C::in_beat_t>& in) {
#pragma HLS INLINE
    ap_int<C::IN_BITS + 1> best[C::CHANNELS];
#pragma HLS ARRAY_PARTITION variable=best complete
TAP:
    for (int t = 0; t < N; t++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t beat = in.read();
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_int<C::IN_BITS + 1> v = get_channel<C::IN_BITS, C::IN_SIGNED>(beat, c);
            if (t == 0 || v > best[c]) best[c] = v;
        }
    }
    typename C::out_beat_t y = 0;
PACK:
    for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
        set_channel<C::OUT_BITS>(y, c, best[c]);
    }
    return y;
}

// Average over N beats of `in`, per channel, requantized.
template <class C, int N>
typename C::out_beat_t average_of_beats(hls::stream<typename C::in_beat_t>& in, const typename C::mult_t M[C::CHANNELS],
                                        const typename C::shift_t S[C::CHANNELS]) {
#pragma HLS INLINE
    ap_int<C::ACC_BITS> sum[C::CHANNELS];
#pragma HLS ARRAY_PARTITION variable=sum complete
    const int x_zp = C::X_ZP;
TAP:
    for (int t = 0; t < N; t++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t beat = in.read();
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_int<C::IN_BITS + 1> v = get_channel<C::IN_BITS, C::IN_SIGNED>(beat, c);
            sum[c] = (t == 0 ? ap_int<C::ACC_BITS>(0) : sum[c]) + v;
        }
    }
    typename C::out_beat_t y = 0;
REQUANT:
    for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
        const ap_int<C::ACC_BITS> centred = sum[c] - ap_int<C::ACC_BITS>(N * x_zp);
        const ap_int<C::MULT_BITS> m = M[c];
        set_channel<C::OUT_BITS>(y, c, requant<C>(scale_acc<0, C::MULT_BITS>(centred, m, m), S[c]));
    }
    return y;
}

template <class C>
void maxpool(hls::stream<typename C::in_beat_t>& win, hls::stream<typename C::out_beat_t>& out) {
PIXEL:
    for (int px = 0; px < C::OUT_PIXELS; px++) {
        out.write(max_of_beats<C, C::TAPS>(win));
    }
}

template <class C>
void avgpool(hls::stream<typename C::in_beat_t>& win, hls::stream<typename C::out_beat_t>& out,
             const typename C::mult_t M[C::CHANNELS], const typename C::shift_t S[C::CHANNELS]) {
#pragma HLS ARRAY_PARTITION variable=M complete
#pragma HLS ARRAY_PARTITION variable=S complete
PIXEL:
    for (int px = 0; px < C::OUT_PIXELS; px++) {
        out.write(average_of_beats<C, C::TAPS>(win, M, S));
    }
}

template <class C>
void global_maxpool(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
    out.write(max_of_beats<C, C::IN_PIXELS>(in));
}

template <class C>
void global_avgpool(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                    const typename C::mult_t M[C::CHANNELS], const typename C::shift_t S[C::CHANNELS]) {
#pragma HLS ARRAY_PARTITION variable=M complete
#pragma HLS ARRAY_PARTITION variable=S complete
    out.write(average_of_beats<C, C::IN_PIXELS>(in, M, S));
}

}  // namespace hlsgen

#endif
