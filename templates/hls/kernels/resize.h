// hlsgen HLS kernels: nearest-neighbour upsampling by integer factors (the upsample layer, QResize).
//
// Output pixel (i, j) is input pixel (i / FH, j / FW). One flattened II=1 loop over the output beats
// (IN_H*FH rows of IN_W*FW pixels, one whole pixel a beat): the first of the FH output rows of an
// input row reads that row's pixels, one every FW beats, and stores them in a row buffer of IN_W
// pixels; the other FH-1 rows replay it from the buffer without reading. A held register repeats a
// pixel FW times. One frame per call: IN_H*FH*IN_W*FW cycles (the cycle model).
//
// Config C: IN_H, IN_W, CHANNELS, FH, FW, IN_BITS, OUT_BITS, in_beat_t, out_beat_t.
#ifndef HLSGEN_RESIZE_H
#define HLSGEN_RESIZE_H

#include "hlsgen_common.h"

namespace hlsgen {

template <class C>
void upsample(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
    static typename C::in_beat_t row[C::IN_W];
    typename C::in_beat_t pixel = 0;
    int x = 0, k = 0, r = 0;  // input column, its copy across (FW), the row's copy down (FH)
BEAT:
    for (int i = 0; i < C::IN_H * C::FH * C::IN_W * C::FW; i++) {
#pragma HLS PIPELINE II=1
        if (k == 0) {
            if (r == 0) {
                pixel = in.read();
                row[x] = pixel;
            } else {
                pixel = row[x];
            }
        }
        out.write(typename C::out_beat_t(pixel));
        if (k == C::FW - 1) {
            k = 0;
            if (x == C::IN_W - 1) {
                x = 0;
                r = r == C::FH - 1 ? 0 : r + 1;
            } else {
                x++;
            }
        } else {
            k++;
        }
    }
}

}  // namespace hlsgen

#endif
