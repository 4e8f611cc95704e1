// hlsgen HLS kernels: the reorder layer, a frame buffer between a mid-network Transpose/Reshape and
// a layer that reads pixels in raster order with channels innermost.
//
// Write phase: IN_PIXELS beats of IN_C codes, stored in arrival order (IN_PIXELS cycles).
// Read phase: ELEMENTS codes, one per cycle, element k being arrival element PERM[k]; every OUT_C
// of them form an output beat. The phases are two processes around a ping-pong frame buffer, so a
// frame takes max(IN_PIXELS, ELEMENTS) cycles in steady state (the first IN_PIXELS + ELEMENTS).
// Folded streams (pixels wider than a beat): IN_PIXELS counts input beats of IN_C lanes (PERM indexes
// the beats as they arrive, lane innermost), and a pixel's OUT_PC codes leave as beats of OUT_C, the
// last one zero above its codes.
//
// Config C: IN_PIXELS, IN_C, OUT_C, OUT_PC, ELEMENTS, IN_BITS, OUT_BITS, perm_t, in_beat_t, out_beat_t.
#ifndef HLSGEN_REORDER_H
#define HLSGEN_REORDER_H

#include "hlsgen_common.h"

namespace hlsgen {

// Write phase: the frame's input beats into the buffer, lane innermost.
template <class C>
void reorder_write(hls::stream<typename C::in_beat_t>& in, ap_uint<C::IN_BITS> frame[C::IN_PIXELS * C::IN_C]) {
WRITE:
    for (int px = 0; px < C::IN_PIXELS; px++) {
#pragma HLS PIPELINE II=1
        const typename C::in_beat_t x = in.read();
    LANE:
        for (int c = 0; c < C::IN_C; c++) {
#pragma HLS UNROLL
            frame[px * C::IN_C + c] = x.range(c * C::IN_BITS + C::IN_BITS - 1, c * C::IN_BITS);
        }
    }
}

// Read phase: the codes in canonical order, packed into output beats.
template <class C>
void reorder_read(const ap_uint<C::IN_BITS> frame[C::IN_PIXELS * C::IN_C],
                  hls::stream<typename C::out_beat_t>& out, const typename C::perm_t PERM[C::ELEMENTS]) {
    typename C::out_beat_t y = 0;
    int c = 0, oc = 0;
READ:
    for (int k = 0; k < C::ELEMENTS; k++) {
#pragma HLS PIPELINE II=1
        y.range(c * C::OUT_BITS + C::OUT_BITS - 1, c * C::OUT_BITS) = frame[PERM[k]];
        if (c == C::OUT_C - 1 || oc == C::OUT_PC - 1) {
            out.write(y);
            y = 0;
            c = 0;
        } else {
            c++;
        }
        step<C::OUT_PC>(oc);
    }
}

// The two phases in a DATAFLOW region: the frame buffer between them is a ping-pong buffer (PIPO), so
// the next frame is written while this one is read.
template <class C>
void reorder_layer(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out,
                   const typename C::perm_t PERM[C::ELEMENTS]) {
#pragma HLS DATAFLOW
    ap_uint<C::IN_BITS> frame[C::IN_PIXELS * C::IN_C];
#pragma HLS ARRAY_PARTITION variable=frame cyclic factor=C::IN_C
    reorder_write<C>(in, frame);
    reorder_read<C>(frame, out, PERM);
}

}  // namespace hlsgen

#endif
