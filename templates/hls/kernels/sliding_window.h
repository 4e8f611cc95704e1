// hlsgen HLS kernels: the sliding-window generator (line buffer) in front of conv, depthwise conv
// and pooling layers.
//
// Reads one frame of IN_H x IN_W pixels (raster order, all channels in one beat) and writes, for
// every output position in raster order, its K_H x K_W window: K_H*K_W beats, taps in row-major
// order (kh, kw). Window (oy, ox) covers padded rows oy*STRIDE_H + kh*DIL_H and columns
// ox*STRIDE_W + kw*DIL_W (PAD_T/PAD_L pixels of padding before the image); a tap outside the image
// holds PAD_VALUE in every channel (the input zero point of a convolution, so that it contributes
// real 0; the lowest code of a max pool). Padding is not stored.
//
// Reading and emitting are concurrent and decoupled: one pipelined loop (II=1) whose every iteration
// may read one input pixel (if one is waiting: `!in.empty()`) and emit one tap (if the window FIFO
// has room: `!win.full()`), until the frame is read and every window emitted:
//   read  pixel (wr, wc) into line buffer row wr mod NROWS when that row is free:
//         wr < NROWS + max(0, top row of the window being emitted), NROWS = SPAN_H + STRIDE_H rows
//         (the window's rows plus the next STRIDE_H: the next band is read while this one is emitted);
//   emit  the next tap when its window's last input pixel (bottom-right, clipped to the image: the
//         dependency of hlsgen.hw.lower.last_input_pixel) was read in an earlier iteration.
// Counters only (rows, columns, taps wrap; no division or modulo). Because a full window FIFO does not
// stop reading (nor an empty input emitting), the line buffer keeps filling while the unit behind it
// works on its output folds, and a fork in front of it never waits for this branch's emission (a
// static read/emit schedule would couple them and can deadlock a residual fork). WIN_ITERS, the trip
// count without stalls, is computed by hlsgen (hls_layers.window_schedule replays these decisions);
// the timed model (hlsgen/sim/hls_timing.py) simulates the same decisions cycle by cycle. In C
// simulation the layers run one after another, so the input is never empty and the output never
// full: the same order of reads and taps.
//
// A folded stream (BEAT_C < CIN channels a beat, F beats a pixel) is windowed as an image F times as
// wide with a window F times as wide (strides and left/right padding in beats, dilation 1 along the
// width: hlsgen.hw.layers.common.beat_window): a tap is then F consecutive beats. A unit that takes
// one fold's taps at a time (a depthwise conv reading PE channels a beat) gets each window TAP_FOLDS
// = F times, the f-th time every tap's fold f (common.fold_major_window: in beats, the window dilated
// F times along the width, shifted by f beats); TAP_FOLDS = 1 otherwise.
//
// Config C: IN_H, IN_W, BEAT_C, IN_BITS, K_H, K_W, STRIDE_H, STRIDE_W, DIL_H, DIL_W, PAD_T, PAD_L,
//           PAD_B, PAD_R, PAD_VALUE, OUT_H, OUT_W, TAP_FOLDS, NROWS, ROW0_SLOT, WIN_ITERS, in_beat_t.
#ifndef HLSGEN_SLIDING_WINDOW_H
#define HLSGEN_SLIDING_WINDOW_H

#include "hlsgen_common.h"

namespace hlsgen {

template <class C>
void sliding_window(hls::stream<typename C::in_beat_t>& in, hls::stream<typename C::in_beat_t>& win) {
    typedef typename C::in_beat_t beat_t;
    static const int SPAN_H = C::DIL_H * (C::K_H - 1) + 1;
    static const int SPAN_W = C::DIL_W * (C::K_W - 1) + C::TAP_FOLDS;  // to the last fold's last tap
    static_assert((C::IN_H + C::PAD_T + C::PAD_B - SPAN_H) / C::STRIDE_H + 1 == C::OUT_H, "window rows");
    static_assert((C::IN_W + C::PAD_L + C::PAD_R - SPAN_W) / C::STRIDE_W + 1 == C::OUT_W, "window columns");
    static_assert(C::NROWS >= SPAN_H && C::NROWS > C::STRIDE_H && C::NROWS > C::DIL_H, "line buffer rows");

    // one read and one write per cycle (a dual-port RAM). No DEPENDENCE pragma: a tap can read the
    // pixel written one iteration earlier (a 1x1 strided window), so Vitis must see that dependence.
    beat_t lines[C::NROWS][C::IN_W];
    const beat_t pad = splat<C::IN_BITS, C::BEAT_C, beat_t::width>(C::PAD_VALUE);

    // write side: the next pixel to read (row, column) and its line-buffer row
    int wr = 0, wc = 0, wslot = 0;
    // emit side: window (oy, ox) at image row ybase / column xbase (negative inside the top/left
    // padding), tap (ky, kx) at row ty (line-buffer row tslot) and column tx
    int oy = 0, ox = 0, ky = 0, kx = 0, kf = 0;  // kf: the fold of a fold-major window (TAP_FOLDS > 1)
    int ybase = -C::PAD_T, xbase = -C::PAD_L, ty = -C::PAD_T, tx = -C::PAD_L;
    int yslot = C::ROW0_SLOT, tslot = C::ROW0_SLOT;
    bool emitting = true;
WINDOW:
    while (emitting || wr < C::IN_H) {
#pragma HLS PIPELINE II=1
        // the window's last input pixel, clipped to the image
        int need_r = ybase + SPAN_H - 1, need_c = xbase + SPAN_W - 1;
        if (need_r > C::IN_H - 1) need_r = C::IN_H - 1;
        if (need_r < 0) need_r = 0;
        if (need_c > C::IN_W - 1) need_c = C::IN_W - 1;
        if (need_c < 0) need_c = 0;
        const bool window_in = emitting && (wr > need_r || (wr == need_r && wc > need_c));
        const bool row_free = wr < C::IN_H && (!emitting || wr < C::NROWS + (ybase > 0 ? ybase : 0));
#if defined(__SYNTHESIS__) || defined(HLSGEN_EXACT_ROM)
        const bool ready = window_in && !win.full();
        const bool room = row_free && !in.empty();
#else
        // C simulation: the producer has run to completion and streams are unbounded, so these are
        // the same decisions; a short producer is reported by the (blocking) read of an empty stream
        // (the synthesis view above, compiled by the HLSGEN_EXACT_ROM test, would wait for it forever)
        const bool ready = window_in;
        const bool room = row_free;
#endif
        if (ready) {
            const bool inside = ty >= 0 && ty < C::IN_H && tx >= 0 && tx < C::IN_W;
            win.write(inside ? lines[tslot][tx] : pad);
            // next tap: kx, then ky, then the fold kf, then the window (ox, then oy)
            if (kx == C::K_W - 1) {
                kx = 0;
                tx = xbase + kf;
                if (ky == C::K_H - 1) {
                    ky = 0;
                    if (kf < C::TAP_FOLDS - 1) {
                        kf++;
                    } else if (ox == C::OUT_W - 1) {
                        kf = 0;
                        ox = 0;
                        xbase = -C::PAD_L;
                        if (oy == C::OUT_H - 1) emitting = false;
                        oy++;
                        ybase += C::STRIDE_H;
                        yslot += C::STRIDE_H;
                        if (yslot >= C::NROWS) yslot -= C::NROWS;
                    } else {
                        kf = 0;
                        ox++;
                        xbase += C::STRIDE_W;
                    }
                    tx = xbase + kf;
                    ty = ybase;
                    tslot = yslot;
                } else {
                    ky++;
                    ty += C::DIL_H;
                    tslot += C::DIL_H;
                    if (tslot >= C::NROWS) tslot -= C::NROWS;
                }
            } else {
                kx++;
                tx += C::DIL_W;
            }
        }
        if (room) {
            lines[wslot][wc] = in.read();
            if (wc == C::IN_W - 1) {
                wc = 0;
                wr++;
                if (wslot == C::NROWS - 1) {
                    wslot = 0;
                } else {
                    wslot++;
                }
            } else {
                wc++;
            }
        }
    }
}

}  // namespace hlsgen

#endif
