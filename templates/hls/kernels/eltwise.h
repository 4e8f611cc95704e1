// hlsgen HLS kernels: element-wise layers, one pixel (all channels) per cycle.
//
//   add:      v = (a[c] - A_ZP) * AM[c] + (b[c] - B_ZP) * BM[c]      (two streams, own scales)
//   requant:  v = (x[c] - X_ZP) * M[c]   (MN[c] where that is negative: a standalone LeakyReLU)
// then y = clamp(ZP + round_shift(v, S[c]), LO, HI). Tables are [CHANNELS] (per-tensor values
// are repeated per channel).
//   lut:      y[c] = T[x[c] - X_LO]      (an elementwise function tabulated over every input code;
//             T is partitioned so that every channel lane reads it in the same cycle)
//
// Config C: PIXELS, CHANNELS, OUT_BITS, ZP, LO, HI, ROUNDING, MULT_BITS, mult_t, shift_t,
//           out_beat_t; add: A_BITS, A_SIGNED, A_ZP, B_BITS, B_SIGNED, B_ZP, a_beat_t, b_beat_t;
//           requant: IN_BITS, IN_SIGNED, X_ZP, HAS_MULT_NEG, MN_LEN, in_beat_t;
//           lut: IN_BITS, IN_SIGNED, X_LO, ENTRIES, table_t, in_beat_t.
#ifndef HLSGEN_ELTWISE_H
#define HLSGEN_ELTWISE_H

#include "epilogue.h"
#include "hlsgen_common.h"

namespace hlsgen {

template <class C>
void add_layer(hls::stream<typename C::a_beat_t>& a, hls::stream<typename C::b_beat_t>& b,
               hls::stream<typename C::out_beat_t>& out, const typename C::mult_t AM[C::CHANNELS],
               const typename C::mult_t BM[C::CHANNELS], const typename C::shift_t S[C::CHANNELS]) {
#pragma HLS ARRAY_PARTITION variable=AM complete
#pragma HLS ARRAY_PARTITION variable=BM complete
#pragma HLS ARRAY_PARTITION variable=S complete
    const int a_zp = C::A_ZP, b_zp = C::B_ZP;
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        const typename C::a_beat_t xa = a.read();
        const typename C::b_beat_t xb = b.read();
        typename C::out_beat_t y = 0;
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_int<C::A_BITS + 2> da = get_channel<C::A_BITS, C::A_SIGNED>(xa, c) - a_zp;
            const ap_int<C::B_BITS + 2> db = get_channel<C::B_BITS, C::B_SIGNED>(xb, c) - b_zp;
            const ap_int<C::MULT_BITS> am = AM[c], bm = BM[c];
            const ap_int<64> v = ap_int<64>(da * am) + ap_int<64>(db * bm);
            set_channel<C::OUT_BITS>(y, c, requant<C>(v, S[c]));
        }
        out.write(y);
    }
}

template <class C>
void requant_layer(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                   const typename C::mult_t M[C::CHANNELS], const typename C::mult_t MN[C::MN_LEN],
                   const typename C::shift_t S[C::CHANNELS]) {
#pragma HLS ARRAY_PARTITION variable=M complete
#pragma HLS ARRAY_PARTITION variable=MN complete
#pragma HLS ARRAY_PARTITION variable=S complete
    const int x_zp = C::X_ZP;
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t x = in.read();
        typename C::out_beat_t y = 0;
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_int<C::IN_BITS + 2> d = get_channel<C::IN_BITS, C::IN_SIGNED>(x, c) - x_zp;
            const ap_int<C::MULT_BITS> m = M[c];
            const ap_int<C::MULT_BITS> m_neg = C::HAS_MULT_NEG ? ap_int<C::MULT_BITS>(MN[c]) : m;
            set_channel<C::OUT_BITS>(y, c, requant<C>(scale_acc<C::HAS_MULT_NEG, C::MULT_BITS>(d, m, m_neg), S[c]));
        }
        out.write(y);
    }
}

template <class C>
void lut_layer(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
               const typename C::table_t T[C::ENTRIES]) {
#pragma HLS ARRAY_PARTITION variable=T complete
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t x = in.read();
        typename C::out_beat_t y = 0;
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_uint<C::IN_BITS + 1> idx = get_channel<C::IN_BITS, C::IN_SIGNED>(x, c) - C::X_LO;
            set_channel<C::OUT_BITS>(y, c, T[idx]);
        }
        out.write(y);
    }
}

}  // namespace hlsgen

#endif
