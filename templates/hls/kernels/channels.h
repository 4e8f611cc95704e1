// hlsgen HLS kernels: channel-range layers, concat and slice (one pixel per cycle; whole-pixel beats).
//
//   concat: per pixel one beat of every input, read in the same iteration; input k's codes land at bits
//           [OFF_k, OFF_{k+1}) of the output beat (input 0 lowest: its channels first). The inputs are
//           codes of the output's type already (the quantize pass requantized any that were not).
//   slice:  per pixel, channels [START, END) of the input beat: bits [START*BITS, END*BITS).
// One flattened II=1 loop over the frame's PIXELS: PIXELS cycles a frame (the cycle model).
// Bits above the codes of a beat are zero (the stream contract, hlsgen_common.h).
//
// Where a whole pixel is over 4,096 bits, both move beats of FOLD channels (hlsgen/hw/layers/channels.py):
//   concat_folded: per pixel input 0's BEATS_0 beats, then input 1's, ... (the output pixel's BEATS beats
//                  in order: every input's channel count is a multiple of FOLD, so no beat is realigned);
//   slice_folded:  per pixel IN_BEATS beats read, those in [FIRST, LAST] written.
// One flattened II=1 loop over PIXELS x BEATS (IN_BEATS): a beat a cycle (the cycle model).
//
// Config C: PIXELS, INPUTS, OFF_0 .. OFF_INPUTS (bit offsets), out_beat_t (concat);
//           PIXELS, START, END, IN_BITS, in_beat_t, out_beat_t (slice);
//           PIXELS, BEATS, END_0 .. END_INPUTS-1 (each input's last beat + 1), out_beat_t (concat_folded);
//           PIXELS, IN_BEATS, FIRST, LAST, out_beat_t (slice_folded).
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

// The folded concat's beat j of a pixel comes from the input whose range [END_{k-1}, END_k) holds it.
template <class C, class A, class B>
void concat_folded(hls::stream<A>& a, hls::stream<B>& b, hls::stream<typename C::out_beat_t>& out) {
    int j = 0;
BEAT:
    for (int i = 0; i < C::PIXELS * C::BEATS; i++) {
#pragma HLS PIPELINE II=1
        out.write(j < C::END_0 ? typename C::out_beat_t(a.read()) : typename C::out_beat_t(b.read()));
        j = j == C::BEATS - 1 ? 0 : j + 1;
    }
}

template <class C, class A, class B, class D>
void concat_folded(hls::stream<A>& a, hls::stream<B>& b, hls::stream<D>& c,
                   hls::stream<typename C::out_beat_t>& out) {
    int j = 0;
BEAT:
    for (int i = 0; i < C::PIXELS * C::BEATS; i++) {
#pragma HLS PIPELINE II=1
        typename C::out_beat_t y;
        if (j < C::END_0) y = a.read();
        else if (j < C::END_1) y = b.read();
        else y = c.read();
        out.write(y);
        j = j == C::BEATS - 1 ? 0 : j + 1;
    }
}

template <class C, class A, class B, class D, class E>
void concat_folded(hls::stream<A>& a, hls::stream<B>& b, hls::stream<D>& c, hls::stream<E>& d,
                   hls::stream<typename C::out_beat_t>& out) {
    int j = 0;
BEAT:
    for (int i = 0; i < C::PIXELS * C::BEATS; i++) {
#pragma HLS PIPELINE II=1
        typename C::out_beat_t y;
        if (j < C::END_0) y = a.read();
        else if (j < C::END_1) y = b.read();
        else if (j < C::END_2) y = c.read();
        else y = d.read();
        out.write(y);
        j = j == C::BEATS - 1 ? 0 : j + 1;
    }
}

template <class C, class X>
void slice_folded(hls::stream<X>& in, hls::stream<typename C::out_beat_t>& out) {
    int j = 0;
BEAT:
    for (int i = 0; i < C::PIXELS * C::IN_BEATS; i++) {
#pragma HLS PIPELINE II=1
        const X x = in.read();
        if (j >= C::FIRST && j <= C::LAST) out.write(typename C::out_beat_t(x));
        j = j == C::IN_BEATS - 1 ? 0 : j + 1;
    }
}

}  // namespace hlsgen

#endif
