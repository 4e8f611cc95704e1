// hlsgen HLS kernels: element-wise layers (add, requant: PE channels per cycle; lut: one pixel per cycle).
//
//   add:      v = (a[c] - A_ZP) * AM[c] + (b[c] - B_ZP) * BM[c]      (two streams, own scales)
//   requant:  v = (x[c] - X_ZP) * M[c]   (MN[c] where that is negative: a standalone LeakyReLU)
// then y = clamp(ZP + round_shift(v, S[c]), LO, HI). Tables are [FOLD][PE] (per-tensor values
// are repeated per channel; zero beyond CHANNELS).
//   lut:      y[c] = T[x[c] - X_LO]      (an elementwise function tabulated over every input code;
//             T is partitioned so that every channel lane reads it in the same cycle). A pixel too
//             wide for one beat is FOLDS beats of CHANNELS lanes; lanes LAST_C.. of its last beat are
//             padding and stay zero.
//
// Config C: PIXELS, CHANNELS, PE, FOLD, IN_GROUP, OUT_GROUP, OUT_BITS, ZP, LO, HI, ROUNDING, MULT_BITS, mult_t, shift_t,
//           out_beat_t; add: A_BITS, A_SIGNED, A_ZP, B_BITS, B_SIGNED, B_ZP, a_beat_t, b_beat_t;
//           requant: IN_BITS, IN_SIGNED, X_ZP, HAS_MULT_NEG, MN_FOLD, in_beat_t;
//           lut: IN_BITS, IN_SIGNED, X_LO, ENTRIES, FOLDS, LAST_C, table_t, in_beat_t.
#ifndef HLSGEN_ELTWISE_H
#define HLSGEN_ELTWISE_H

#include "epilogue.h"
#include "hlsgen_common.h"

namespace hlsgen {

// Add and requant fold their channels over PE requant lanes: one flattened II=1 loop over
// (pixel, fold f < FOLD); an input beat holds IN_GROUP folds (IN_GROUP * PE channels, or the whole
// pixel: IN_GROUP = FOLD), read on its first fold and shifted by PE channels per fold; lane p of fold f
// computes channel f*PE + p with parameters from [FOLD][PE] ROMs at the fold counter, and an output
// beat (OUT_GROUP folds, shifted in PE codes per fold) is written after its last fold:
// PIXELS * FOLD cycles (the cycle model).
template <class C>
void add_layer(hls::stream<typename C::a_beat_t>& a, hls::stream<typename C::b_beat_t>& b,
               hls::stream<typename C::out_beat_t>& out, const typename C::mult_t AM[C::FOLD][C::PE],
               const typename C::mult_t BM[C::FOLD][C::PE], const typename C::shift_t S[C::FOLD][C::PE]) {
    const int a_zp = C::A_ZP, b_zp = C::B_ZP;
    typename C::a_beat_t xa = 0;
    typename C::b_beat_t xb = 0;
    FoldedBeat<C> beat;
    int f = 0, cbase = 0, gi = 0;  // gi: the fold within the input beats
STEP:
    for (int i = 0; i < C::PIXELS * C::FOLD; i++) {
#pragma HLS PIPELINE II=1
        if (gi == 0) {
            xa = a.read();
            xb = b.read();
        } else {
            xa = xa >> (C::PE * C::A_BITS);
            xb = xb >> (C::PE * C::B_BITS);
        }
    LANE:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            const ap_int<C::A_BITS + 2> da = channel_code<C::A_BITS, C::A_SIGNED>(xa, p) - a_zp;
            const ap_int<C::B_BITS + 2> db = channel_code<C::B_BITS, C::B_SIGNED>(xb, p) - b_zp;
            const ap_int<C::MULT_BITS> am = AM[f][p], bm = BM[f][p];
            const ap_int<64> v = ap_int<64>(da * am) + ap_int<64>(db * bm);
            ap_uint<C::OUT_BITS> code = 0;
            if (cbase + p < C::CHANNELS) code = requant<C>(v, S[f][p]);
            beat.put(p, code);
        }
        step<C::IN_GROUP>(gi);
        beat.next(f, cbase, out);
    }
}

template <class C>
void requant_layer(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                   const typename C::mult_t M[C::FOLD][C::PE], const typename C::mult_t MN[C::MN_FOLD][C::PE],
                   const typename C::shift_t S[C::FOLD][C::PE]) {
    const int x_zp = C::X_ZP;
    typename C::in_beat_t x = 0;
    FoldedBeat<C> beat;
    int f = 0, cbase = 0, gi = 0;  // gi: the fold within the input beat
STEP:
    for (int i = 0; i < C::PIXELS * C::FOLD; i++) {
#pragma HLS PIPELINE II=1
        if (gi == 0) {
            x = in.read();
        } else {
            x = x >> (C::PE * C::IN_BITS);
        }
    LANE:
        for (int p = 0; p < C::PE; p++) {
#pragma HLS UNROLL
            const ap_int<C::IN_BITS + 2> d = channel_code<C::IN_BITS, C::IN_SIGNED>(x, p) - x_zp;
            const ap_int<C::MULT_BITS> m = M[f][p];
            const ap_int<C::MULT_BITS> m_neg = C::HAS_MULT_NEG ? ap_int<C::MULT_BITS>(MN[C::HAS_MULT_NEG ? f : 0][p]) : m;
            ap_uint<C::OUT_BITS> code = 0;
            if (cbase + p < C::CHANNELS)
                code = requant<C>(scale_acc<C::HAS_MULT_NEG, C::MULT_BITS>(d, m, m_neg), S[f][p]);
            beat.put(p, code);
        }
        step<C::IN_GROUP>(gi);
        beat.next(f, cbase, out);
    }
}

template <class C>
void lut_layer(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
               const typename C::table_t T[C::ENTRIES]) {
#pragma HLS ARRAY_PARTITION variable=T complete
    int f = 0;
BEAT:
    for (int i = 0; i < C::PIXELS * C::FOLDS; i++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t x = in.read();
        typename C::out_beat_t y = 0;
    CHANNEL:
        for (int c = 0; c < C::CHANNELS; c++) {
#pragma HLS UNROLL
            const ap_uint<C::IN_BITS + 1> idx = get_channel<C::IN_BITS, C::IN_SIGNED>(x, c) - C::X_LO;
            if (c < C::LAST_C || f != C::FOLDS - 1) set_channel<C::OUT_BITS>(y, c, T[idx]);
        }
        out.write(y);
        step<C::FOLDS>(f);
    }
}

}  // namespace hlsgen

#endif
