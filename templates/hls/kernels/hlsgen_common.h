// hlsgen HLS kernels: common types and helpers.
//
// Stream contract: a beat holds FOLD channels of one pixel (all of them unless the stream is folded),
// the ceil(CHANNELS / FOLD) beats of a pixel back to back. Channel c of a beat occupies bits
// [c*BITS, (c+1)*BITS) as a two's complement (signed) or plain binary (unsigned) code; bits above
// the last channel are zero. This is the hex format of OUT/vectors, line for line.
//
// Kernels are templates over a config struct C (generated into params.h, one per layer) holding
// the layer's geometry, folding, widths and requant scalars as compile-time constants. Loop bounds
// are therefore constants; arrays are static; nothing is allocated.
#ifndef HLSGEN_COMMON_H
#define HLSGEN_COMMON_H

#include <ap_int.h>
#include <hls_stream.h>

// Element type of a constant table (weights, biases, multipliers, shifts). Synthesis sees the
// exact width (ap_int<bits>); C simulation stores the same values in a plain C integer type,
// because g++ compiles large initializers of class-typed arrays very slowly. Kernels convert every
// element to ap_int<bits> where they use it, so both views compute the same integers.
#if defined(__SYNTHESIS__) || defined(HLSGEN_EXACT_ROM)
#define HLSGEN_ROM_INT(bits, ctype) ap_int<bits>
#define HLSGEN_ROM_UINT(bits, ctype) ap_uint<bits>
#else
#define HLSGEN_ROM_INT(bits, ctype) ctype
#define HLSGEN_ROM_UINT(bits, ctype) ctype
#endif

namespace hlsgen {

// Tie rules of the requant rounding (hlsgen.numerics.round_shift).
enum Rounding { HALF_EVEN = 0, HALF_UP = 1 };

// The code of channel c of a packed beat, sign-extended if SIGNED (BITS + 1 bits hold any code
// of either signedness).
template <int BITS, int SIGNED, int W>
ap_int<BITS + 1> get_channel(const ap_uint<W>& beat, int c) {
#pragma HLS INLINE
    ap_uint<BITS> raw = beat.range(c * BITS + BITS - 1, c * BITS);
    if (SIGNED) {
        ap_int<BITS> code = raw;  // same width: reinterprets the bits as two's complement
        return code;
    }
    return raw;
}

// The exact type of a BITS-bit code: ap_int<BITS> if signed, ap_uint<BITS> if not (no widening:
// a signed 8-bit activation stays 8 bits wide, so int8 x int8 fits one DSP multiplier port).
template <int BITS, int SIGNED>
struct code_type {
    typedef ap_int<BITS> t;
};
template <int BITS>
struct code_type<BITS, 0> {
    typedef ap_uint<BITS> t;
};

// The code of channel c of a packed beat in its exact type.
template <int BITS, int SIGNED, int W>
typename code_type<BITS, SIGNED>::t channel_code(const ap_uint<W>& beat, int c) {
#pragma HLS INLINE
    typename code_type<BITS, SIGNED>::t code;
    code.range(BITS - 1, 0) = beat.range(c * BITS + BITS - 1, c * BITS);
    return code;
}

// A counter over 0 .. N-1 that wraps (no modulo): returns true when it wrapped to 0.
template <int N>
bool step(int& counter) {
#pragma HLS INLINE
    if (counter == N - 1) {
        counter = 0;
        return true;
    }
    counter++;
    return false;
}

// The output beats of a layer whose PE requant lanes fold over its channels: lane p of fold f holds
// channel f*PE + p. A beat holds GROUP folds (GROUP * PE channels: the output stream's fold; GROUP ==
// FOLD: the whole pixel in one beat), GROUP dividing FOLD. Codes enter at the top of y and move down
// PE codes per fold; a beat is written after its last fold (FOLD cycles per pixel). `next` also
// advances the fold counter f and cbase = f*PE. (FOLD, PE and GROUP default to the layer's; time-shared
// MVU requant units pass RQ_FOLD, RQ and their OUT_GROUP.)
template <class C, int FOLD = C::FOLD, int PE = C::PE, int GROUP = C::OUT_GROUP>
struct FoldedBeat {
    static_assert(FOLD % GROUP == 0, "an output beat holds whole folds, the same number in every beat");
    static const int Y_BITS = GROUP * PE * C::OUT_BITS;
    static const int O_BITS = C::out_beat_t::width < Y_BITS ? C::out_beat_t::width : Y_BITS;
    ap_uint<Y_BITS> y;
    int g;  // the fold within the beat

    FoldedBeat() : y(0), g(0) {}

    void put(int p, const ap_uint<C::OUT_BITS>& code) {
#pragma HLS INLINE
        y.range(Y_BITS - (PE - p - 1) * C::OUT_BITS - 1, Y_BITS - (PE - p) * C::OUT_BITS) = code;
    }

    void next(int& f, int& cbase, hls::stream<typename C::out_beat_t>& out) {
#pragma HLS INLINE
        if (g == GROUP - 1) {
            typename C::out_beat_t o = 0;
            o.range(O_BITS - 1, 0) = y.range(O_BITS - 1, 0);
            out.write(o);
        }
        if (GROUP > 1) y = y >> (PE * C::OUT_BITS);
        step<GROUP>(g);
        if (step<FOLD>(f)) {
            cbase = 0;
        } else {
            cbase += PE;
        }
    }
};

// Store `code` (already inside the channel's range) into channel c of a packed beat.
template <int BITS, int W>
void set_channel(ap_uint<W>& beat, int c, const ap_int<64>& code) {
#pragma HLS INLINE
    ap_uint<BITS> raw = code;  // the low BITS bits: the two's complement code
    beat.range(c * BITS + BITS - 1, c * BITS) = raw;
}

// A beat whose every channel holds `code` (the padding pixel of a sliding window).
template <int BITS, int CHANNELS, int W>
ap_uint<W> splat(int code) {
#pragma HLS INLINE
    ap_uint<W> beat = 0;
SPLAT:
    for (int c = 0; c < CHANNELS; c++) {
#pragma HLS UNROLL
        set_channel<BITS>(beat, c, code);
    }
    return beat;
}

}  // namespace hlsgen

#endif
