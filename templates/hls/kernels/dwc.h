// hlsgen HLS kernels: the data-width converters of folded streams, split and join (the Python
// reference and the fold-change rule: hlsgen/hw/convert.py; the Verilog: hg_split.sv, hg_join.sv).
//
// Sub-beats of W bits come in groups of S (one pixel's share of a stream). A wide beat holds up to K
// of them, sub-beat j at bits [j*W, (j+1)*W); a group is G = ceil(S/K) wide beats, the first G-1
// holding K sub-beats and the last L = S - (G-1)*K.
//   split: wide beats in, one sub-beat per beat out; bits above the L-th sub-beat of a group's last
//          beat are padding and are dropped.
//   join:  one sub-beat per beat in, wide beats out; a group's last beat is zero above its L sub-beats.
// One call moves GROUPS groups (one frame): S*GROUPS iterations of one pipelined loop (II=1), one
// sub-beat each, with wrapping counters j (sub-beat of the wide beat) and g (wide beat of the group).
// IN_BITS / OUT_BITS are the stream element widths and may exceed the data (K*W or W bits, rounded up
// to bytes by the caller): extra input bits are ignored, extra output bits are zero.
#ifndef HLSGEN_DWC_H
#define HLSGEN_DWC_H

#include "hlsgen_common.h"

namespace hlsgen {

// The last sub-beat of a wide beat: sub-beat L-1 of the group's last beat, K-1 of the others.
template <int S, int K>
bool last_sub_beat(int j, int g) {
#pragma HLS INLINE
    const int G = (S + K - 1) / K;
    const int L = S - (G - 1) * K;
    return g == G - 1 ? j == L - 1 : j == K - 1;
}

template <int W, int S, int K, int GROUPS, int IN_BITS, int OUT_BITS>
void split(hls::stream<ap_uint<IN_BITS> >& in, hls::stream<ap_uint<OUT_BITS> >& out) {
    static_assert(IN_BITS >= K * W && OUT_BITS >= W, "stream elements narrower than their data");
    const int G = (S + K - 1) / K;
    ap_uint<K * W> beat = 0;  // the current wide beat, shifted down one sub-beat per iteration
    int j = 0;
    int g = 0;
SUB_BEAT:
    for (int i = 0; i < S * GROUPS; i++) {
#pragma HLS PIPELINE II=1
        if (j == 0) {
            const ap_uint<IN_BITS> x = in.read();
            beat = x.range(K * W - 1, 0);
        }
        ap_uint<OUT_BITS> y = 0;
        y.range(W - 1, 0) = beat.range(W - 1, 0);
        out.write(y);
        if (K > 1) beat = beat >> W;
        if (last_sub_beat<S, K>(j, g)) {
            j = 0;
            step<G>(g);
        } else {
            j++;
        }
    }
}

template <int W, int S, int K, int GROUPS, int IN_BITS, int OUT_BITS>
void join(hls::stream<ap_uint<IN_BITS> >& in, hls::stream<ap_uint<OUT_BITS> >& out) {
    static_assert(IN_BITS >= W && OUT_BITS >= K * W, "stream elements narrower than their data");
    const int G = (S + K - 1) / K;
    const int L = S - (G - 1) * K;
    ap_uint<K * W> beat = 0;  // sub-beats enter at the top and move down one per iteration
    int j = 0;
    int g = 0;
SUB_BEAT:
    for (int i = 0; i < S * GROUPS; i++) {
#pragma HLS PIPELINE II=1
        const ap_uint<IN_BITS> x = in.read();
        if (K > 1) beat = beat >> W;
        beat.range(K * W - 1, (K - 1) * W) = x.range(W - 1, 0);
        if (last_sub_beat<S, K>(j, g)) {
            ap_uint<OUT_BITS> y = 0;
            // the group's last beat: its L sub-beats sit at the top; a constant shift brings them down
            y.range(K * W - 1, 0) = g == G - 1 ? ap_uint<K * W>(beat >> ((K - L) * W)) : beat;
            out.write(y);
            j = 0;
            step<G>(g);
        } else {
            j++;
        }
    }
}

}  // namespace hlsgen

#endif
