// hlsgen HLS kernels: the sliding-window generator (line buffer) in front of conv, depthwise conv
// and pooling layers.
//
// Reads one frame of IN_H x IN_W pixels (raster order, all channels in one beat) and writes, for
// every output position in raster order, its K_H x K_W window: K_H*K_W beats, taps in row-major
// order (kh, kw). The image is walked in its padded form, PAD_T/PAD_L/PAD_B/PAD_R pixels around
// it; a padding tap holds PAD_VALUE in every channel (the input zero point for a convolution, so
// that it contributes real 0; the lowest code for a max pool). A dilated window spans
// DIL*(K-1)+1 pixels and takes every DIL-th; windows start every STRIDE pixels (floor mode).
// The line buffer keeps the last SPAN_H padded rows; a window is emitted as soon as the pixel at
// its bottom-right corner has arrived.
//
// Config C: IN_H, IN_W, CIN, IN_BITS, K_H, K_W, STRIDE_H, STRIDE_W, DIL_H, DIL_W,
//           PAD_T, PAD_L, PAD_B, PAD_R, PAD_VALUE, OUT_H, OUT_W, in_beat_t.
#ifndef HLSGEN_SLIDING_WINDOW_H
#define HLSGEN_SLIDING_WINDOW_H

#include "hlsgen_common.h"

namespace hlsgen {

template <class C>
void sliding_window(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::in_beat_t>& win) {
    typedef typename C::in_beat_t beat_t;
    const int PH = C::IN_H + C::PAD_T + C::PAD_B;
    const int PW = C::IN_W + C::PAD_L + C::PAD_R;
    const int SPAN_H = C::DIL_H * (C::K_H - 1) + 1;
    const int SPAN_W = C::DIL_W * (C::K_W - 1) + 1;
    static_assert((PH - SPAN_H) / C::STRIDE_H + 1 == C::OUT_H, "window rows disagree with OUT_H");
    static_assert((PW - SPAN_W) / C::STRIDE_W + 1 == C::OUT_W, "window columns disagree with OUT_W");

    beat_t lines[SPAN_H][PW];
    const beat_t pad = splat<C::IN_BITS, C::CIN, beat_t::width>(C::PAD_VALUE);

ROW:
    for (int r = 0; r < PH; r++) {
    COL:
        for (int c = 0; c < PW; c++) {
            const bool inside = r >= C::PAD_T && r < C::PAD_T + C::IN_H && c >= C::PAD_L && c < C::PAD_L + C::IN_W;
            lines[r % SPAN_H][c] = inside ? in.read() : pad;
            const int top = r - (SPAN_H - 1);
            const int left = c - (SPAN_W - 1);
            if (top >= 0 && left >= 0 && top % C::STRIDE_H == 0 && left % C::STRIDE_W == 0) {
            TAP_H:
                for (int i = 0; i < C::K_H; i++) {
                TAP_W:
                    for (int j = 0; j < C::K_W; j++) {
#pragma HLS PIPELINE II=1
                        win.write(lines[(top + i * C::DIL_H) % SPAN_H][left + j * C::DIL_W]);
                    }
                }
            }
        }
    }
}

}  // namespace hlsgen

#endif
