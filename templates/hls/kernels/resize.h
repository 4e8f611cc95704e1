// hlsgen HLS kernels: nearest-neighbour upsampling by integer factors (the upsample layer, QResize).
//
// Output pixel (i, j) is input pixel (i / FH, j / FW), FOLDS beats a pixel (1: whole pixels). One
// flattened II=1 loop over the output beats (IN_H*FH rows of IN_W*FW pixels of FOLDS beats): the
// first of the FH output rows of an input row reads that row's pixels, one every FW pixel copies, and
// stores their beats in a row buffer of IN_W*FOLDS beats; the other FH-1 rows replay it from the
// buffer without reading. A pixel register (its FOLDS beats) repeats a pixel FW times, so the row
// buffer is written and read a whole output row apart. One frame per call: IN_H*FH*IN_W*FW*FOLDS
// cycles (the cycle model).
//
// Config C: IN_H, IN_W, CHANNELS, FH, FW, FOLDS, IN_BITS, OUT_BITS, in_beat_t, out_beat_t.
#ifndef HLSGEN_RESIZE_H
#define HLSGEN_RESIZE_H

#include "hlsgen_common.h"

namespace hlsgen {

template <class C>
void upsample(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::out_beat_t>& out) {
    static typename C::in_beat_t row[C::IN_W * C::FOLDS];
    typename C::in_beat_t pixel[C::FOLDS];
#pragma HLS ARRAY_PARTITION variable=pixel complete
    // beat of the pixel, its copy across (FW), input column (as the row buffer's first beat), the row's copy down (FH)
    int b = 0, k = 0, base = 0, r = 0;
BEAT:
    for (int i = 0; i < C::IN_H * C::FH * C::IN_W * C::FW * C::FOLDS; i++) {
#pragma HLS PIPELINE II=1
        typename C::in_beat_t beat;
        if (k == 0) {
            if (r == 0) {
                beat = in.read();
                row[base + b] = beat;
            } else {
                beat = row[base + b];
            }
            pixel[b] = beat;
        } else {
            beat = pixel[b];
        }
        out.write(typename C::out_beat_t(beat));
        if (b < C::FOLDS - 1) {
            b++;
        } else if (k < C::FW - 1) {
            b = 0;
            k++;
        } else if (base < (C::IN_W - 1) * C::FOLDS) {
            b = 0;
            k = 0;
            base += C::FOLDS;
        } else {
            b = 0;
            k = 0;
            base = 0;
            r = r == C::FH - 1 ? 0 : r + 1;
        }
    }
}

}  // namespace hlsgen

#endif
