// hlsgen HLS kernels: channel-range layers, concat and slice (one pixel per cycle; whole-pixel beats).
//
//   concat: per pixel one beat of every input, read in the same iteration; input k's codes land at bits
//           [OFF_k, OFF_{k+1}) of the output beat (input 0 lowest: its channels first). The inputs are
//           codes of the output's type already (the quantize pass requantized any that were not).
//   slice:  per pixel, channels [START, END) of the input beat: bits [START*BITS, END*BITS).
// One flattened II=1 loop over the frame's PIXELS: PIXELS cycles a frame (the cycle model).
// Bits above the codes of a beat are zero (the stream contract, hlsgen_common.h).
//
// Config C: PIXELS, INPUTS, OFF_0 .. OFF_INPUTS (bit offsets), out_beat_t (concat);
//           PIXELS, START, END, IN_BITS, in_beat_t, out_beat_t (slice).
// A concat of 2, 3 or 4 inputs (each input's element type is deduced from its stream).
#ifndef HLSGEN_CHANNELS_H
#define HLSGEN_CHANNELS_H

#include "hlsgen_common.h"

namespace hlsgen {

// Bits [LO, HI) of y take the low HI - LO bits of x.
template <int LO, int HI, class Y, class X>
void put_codes(Y& y, const X& x) {
#pragma HLS INLINE
    y.range(HI - 1, LO) = x.range(HI - LO - 1, 0);
}

template <class C, class A, class B>
void concat_layer(hls::stream<A>& a, hls::stream<B>& b, hls::stream<typename C::out_beat_t>& out) {
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        typename C::out_beat_t y = 0;
        put_codes<C::OFF_0, C::OFF_1>(y, a.read());
        put_codes<C::OFF_1, C::OFF_2>(y, b.read());
        out.write(y);
    }
}

template <class C, class A, class B, class D>
void concat_layer(hls::stream<A>& a, hls::stream<B>& b, hls::stream<D>& c,
                  hls::stream<typename C::out_beat_t>& out) {
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        typename C::out_beat_t y = 0;
        put_codes<C::OFF_0, C::OFF_1>(y, a.read());
        put_codes<C::OFF_1, C::OFF_2>(y, b.read());
        put_codes<C::OFF_2, C::OFF_3>(y, c.read());
        out.write(y);
    }
}

template <class C, class A, class B, class D, class E>
void concat_layer(hls::stream<A>& a, hls::stream<B>& b, hls::stream<D>& c, hls::stream<E>& d,
                  hls::stream<typename C::out_beat_t>& out) {
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        typename C::out_beat_t y = 0;
        put_codes<C::OFF_0, C::OFF_1>(y, a.read());
        put_codes<C::OFF_1, C::OFF_2>(y, b.read());
        put_codes<C::OFF_2, C::OFF_3>(y, c.read());
        put_codes<C::OFF_3, C::OFF_4>(y, d.read());
        out.write(y);
    }
}

template <class C>
void slice_layer(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
PIXEL:
    for (int px = 0; px < C::PIXELS; px++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t x = in.read();
        typename C::out_beat_t y = 0;
        y.range((C::END - C::START) * C::IN_BITS - 1, 0) = x.range(C::END * C::IN_BITS - 1, C::START * C::IN_BITS);
        out.write(y);
    }
}

}  // namespace hlsgen

#endif
